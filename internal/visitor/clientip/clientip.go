// Package clientip says which client a request comes from: the peer
// address, or the address a trusted proxy forwarded in X-Forwarded-For.
package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// ParseTrusted parses --trusted-proxies: CIDRs or single addresses,
// comma-separated.
func ParseTrusted(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q: want an address or CIDR", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Extractor is echo's IPExtractor for c.RealIP(): the peer address, unless
// the peer is a trusted proxy, in which case the right-most address in
// X-Forwarded-For that is not itself a trusted proxy. Nothing is trusted by
// default (not even loopback or private ranges), so a client cannot choose
// its own address by sending the header.
func Extractor(trusted []netip.Prefix) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range trusted {
		_, n, err := net.ParseCIDR(p.String())
		if err == nil {
			opts = append(opts, echo.TrustIPRange(n))
		}
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// Peer is the request's peer address, without a port: the client when no
// proxy is trusted.
func Peer(r *http.Request) string { return echo.ExtractIPDirect()(r) }

// Bucket is the key limits count a client address under: an IPv4 address
// as it is, an IPv6 address by its /64 (one subscriber's usual allocation,
// so rotating through it gains nothing).
func Bucket(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// Network is the key a client's network is priced under (a place's price
// per network, proof-of-work challenges per network): Bucket, with an IPv4
// address taken by its first v4Bits bits (32, or out of 8..32: the address
// itself).
func Network(ip string, v4Bits int) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || v4Bits < 8 || v4Bits >= 32 || !a.Unmap().Is4() {
		return Bucket(ip)
	}
	p, _ := a.Unmap().Prefix(v4Bits)
	return p.String()
}

// TrustedPeer reports whether the connection's peer (an http.Request's
// RemoteAddr) is one of the trusted proxies.
func TrustedPeer(trusted []netip.Prefix, remoteAddr string) bool {
	if len(trusted) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
