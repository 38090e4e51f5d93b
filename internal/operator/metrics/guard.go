package metrics

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Guard says who may read /metrics.
//
//   - Neither set: loopback only, so a developer can curl it and nothing
//     leaks from a server reachable from outside.
//   - Token only: any address bearing "Authorization: Bearer <token>".
//   - Allow only: the listed networks (loopback only if listed).
//   - Both: a listed address and the token.
//
// The address is the TCP peer: behind a proxy, allow the proxy (or use the
// token); X-Forwarded-For is not trusted.
type Guard struct {
	Token string
	Allow []netip.Prefix
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// ParseAllow reads a comma-separated list of CIDRs or addresses
// ("10.0.0.0/8, 192.168.1.7"); an address is its own /32 or /128.
func ParseAllow(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("metrics: parse allow-list: %q is neither a CIDR nor an address", f)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Handler serves the metrics in the Prometheus text format to those g lets
// in, and answers others 401 or 403 with the API's JSON error.
func (m *Metrics) Handler(g Guard) http.Handler {
	allow := g.Allow
	if len(allow) == 0 && g.Token == "" {
		allow = loopback
	}
	token := []byte(g.Token)
	serve := promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{
		// A source that fails leaves its series out; the rest still serve.
		ErrorHandling: promhttp.ContinueOnError,
		// Scrapers arriving together share one read of Redis.
		CoalesceGather: true,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(allow) > 0 && !allowed(allow, r.RemoteAddr) {
			writeError(w, http.StatusForbidden, "forbidden", "this address may not read metrics")
			return
		}
		if len(token) > 0 && subtle.ConstantTimeCompare([]byte(bearer(r)), token) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong metrics token")
			return
		}
		serve.ServeHTTP(w, r)
	})
}

func allowed(allow []netip.Prefix, remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]body{"error": {Code: code, Message: message}})
}
