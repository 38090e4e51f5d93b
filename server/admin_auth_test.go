package server_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// lockedBuffer is a log sink tests read while the server writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// adminEnv is a server whose wrong admin tokens are counted in the shared
// Redis, behind trusted proxies (or none).
func adminEnv(t *testing.T, trusted []netip.Prefix, perIP int) (*env, *lockedBuffer) {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys, queue.LineOptions{Logger: log})
	fails := throttle.New(rdb, "admin", throttle.Options{Prefix: redistest.Prefix(t), Logger: log,
		PerClient: throttle.Limit{N: perIP, Per: time.Minute}})
	srv := server.New(line, server.Config{AdminToken: adminToken, Logger: log, TrustedProxies: trusted, AdminFailures: fails})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &env{t: t, srv: srv, url: ts.URL, line: line}, logs
}

func (e *env) adminFrom(ip, tok string) resp {
	return e.do(nil, "GET", "/admin/api/rooms", "", "Authorization", "Bearer "+tok, "X-Forwarded-For", ip)
}

// TestAdminAPIThrottlesWrongTokens: N wrong tokens from a client network,
// then 429 with Retry-After and the JSON error for its wrong tokens; the
// right token gets in from that network and from any other, however many
// networks are locked out (there is no overall count to run out); the log
// names each counted failure's client, not the locked-out flood.
func TestAdminAPIThrottlesWrongTokens(t *testing.T) {
	e, logs := adminEnv(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, 3)
	for i := 0; i < 3; i++ {
		wantError(t, e.adminFrom("203.0.113.5", "wrong"), http.StatusUnauthorized, "unauthorized")
	}
	for i := 0; i < 20; i++ {
		r := e.adminFrom("203.0.113.5", "wrong")
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Fatalf("429 without Retry-After: %q", ra)
		}
	}
	if n := strings.Count(logs.String(), "remote=203.0.113.5"); n != 3 {
		t.Fatalf("%d failure log lines for the forwarded client, want its 3 counted failures:\n%s", n, logs.String())
	}
	// 30 more networks lock themselves out.
	for n := 0; n < 30; n++ {
		for i := 0; i < 4; i++ {
			e.adminFrom(fmt.Sprintf("192.0.2.%d", n), "wrong")
		}
	}
	for _, ip := range []string{"203.0.113.5", "192.0.2.7", "198.51.100.7"} {
		for i := 0; i < 5; i++ {
			if r := e.adminFrom(ip, adminToken); r.status != http.StatusOK {
				t.Fatalf("right token from %s, request %d: %d %s", ip, i+1, r.status, r.raw)
			}
		}
	}
	// Still locked out for wrong tokens: the right ones reset nothing.
	wantError(t, e.adminFrom("203.0.113.5", "wrong"), http.StatusTooManyRequests, "rate_limited")
	wantError(t, e.adminFrom("203.0.113.5", ""), http.StatusTooManyRequests, "rate_limited")
}

// TestAdminAPIThrottleIgnoresForgedForwarding: without trusted proxies a
// client cannot get a fresh count by sending X-Forwarded-For, and the log
// records its real address.
func TestAdminAPIThrottleIgnoresForgedForwarding(t *testing.T) {
	e, logs := adminEnv(t, nil, 3)
	for i, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
		if r := e.adminFrom(ip, "wrong"); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i+1, r.status)
		}
	}
	wantError(t, e.adminFrom("192.0.2.4", "wrong"), http.StatusTooManyRequests, "rate_limited")
	if out := logs.String(); strings.Contains(out, "192.0.2.") || !strings.Contains(out, "remote=127.0.0.1") {
		t.Fatalf("failure log trusted a forged X-Forwarded-For:\n%s", out)
	}
}

// TestTargetURLBypassesAreRefused: the admin API refuses a target_url or
// logo_url a browser would read as another site (wr_token would go there).
func TestTargetURLBypassesAreRefused(t *testing.T) {
	e := newEnv(t)
	for _, raw := range []string{`/\\evil.example`, `/\\\\evil`, `\\\\evil`, `//evil.example`, `/\\t/evil`, `https://shop.example\\@evil`, `https:evil.example`} {
		for _, field := range []string{"target_url", "logo_url"} {
			r := e.admin("PUT", "/admin/api/rooms/sale", `{"`+field+`": "`+raw+`"}`)
			wantError(t, r, http.StatusBadRequest, "invalid")
			if r.body["error"].(map[string]any)["field"] != field {
				t.Errorf("%s %s: %s", field, raw, r.raw)
			}
		}
	}
	e.putRoom("sale", `{"target_url": "/%5Cevil.example"}`) // stays a path on this site
}
