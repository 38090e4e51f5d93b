package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// checkLoopback refuses any target but a loopback one: the load generator
// must never be pointed at someone else's server. lookup resolves names so
// that "localhost" passes only when it really is loopback here.
func checkLoopback(raw string, lookup func(ctx context.Context, host string) ([]net.IPAddr, error)) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("loadgen: parse --url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("loadgen: --url %q: want http or https", raw)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("loadgen: --url %q: no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("loadgen: --url %q: credentials in the URL are not supported", raw)
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return nil, fmt.Errorf("loadgen: --url %q: %s is not a loopback address", raw, ip)
		}
		return u, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("loadgen: resolve %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("loadgen: resolve %q: no addresses", host)
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return nil, fmt.Errorf("loadgen: --url %q: %s resolves to %s, not loopback", raw, host, a.IP)
		}
	}
	return u, nil
}

// loopbackOnly is a dialer Control hook: it checks the address actually being
// connected to, so a name that resolves differently later is still refused.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("loadgen: dial %q: %w", address, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("loadgen: dial %q: not a loopback address", address)
	}
	return nil
}
