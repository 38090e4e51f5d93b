package dashboard_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/templates"
)

// signInFrom loads the sign-in form and posts token as client ip (named in
// X-Forwarded-For, which the test site trusts from loopback).
func (b *browser) signInFrom(ip, token string) page {
	b.t.Helper()
	csrf := attr(b.t, b.get("/admin/login"), `input[name="csrf_token"]`, "value")
	return b.post("/admin/login", url.Values{"csrf_token": {csrf}, "token": {token}}, "X-Forwarded-For", ip)
}

// sharedFailures is one count of wrong tokens on the shared Redis, as every
// server of a deployment has.
func sharedFailures(t *testing.T, perIP int) func(*dashboard.Deps) {
	f := throttle.New(redistest.Shared(t).Client(t), "admin", throttle.Options{Prefix: redistest.Prefix(t),
		PerClient: throttle.Limit{N: perIP, Per: time.Minute}})
	return func(d *dashboard.Deps) { d.Failures = f }
}

// TestSignInThrottlesWrongTokensPerNetworkOnly: after N wrong tokens a
// client network gets 429 with Retry-After and a clear message for its
// wrong tokens, on every server; the right token signs in all the same,
// from that network and from any other, however many networks failed.
func TestSignInThrottlesWrongTokensPerNetworkOnly(t *testing.T) {
	deps := sharedFailures(t, 3)
	a, other := newSite(t, siteOptions{deps: deps}), newSite(t, siteOptions{deps: deps})
	attacker := a.browser()
	for i := 0; i < 3; i++ {
		if p := attacker.signInFrom("203.0.113.5", "wrong"); p.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i+1, p.status)
		}
	}
	p := attacker.signInFrom("203.0.113.5", "wrong")
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" ||
		byTestID(t, p, "login-error") != templates.T(templates.English, "admin.login.throttled") {
		t.Fatalf("4th wrong token: %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	// The other server counts the same failures.
	if p := other.browser().signInFrom("203.0.113.5", "wrong"); p.status != http.StatusTooManyRequests {
		t.Fatalf("throttled client on another server: %d", p.status)
	}
	// Rotating inside an IPv6 /64 gains nothing.
	v6 := a.browser()
	for i, ip := range []string{"2001:db8:1::1", "2001:db8:1::2", "2001:db8:1::3", "2001:db8:1::4"} {
		want := http.StatusUnauthorized
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		if p := v6.signInFrom(ip, "wrong"); p.status != want {
			t.Fatalf("%s: %d, want %d", ip, p.status, want)
		}
	}
	// 20 more networks use up their allowance: no overall count runs out.
	for n := 0; n < 20; n++ {
		for i := 0; i < 4; i++ {
			a.browser().signInFrom(fmt.Sprintf("198.51.100.%d", n), "wrong")
		}
	}
	// The operator signs in from a locked-out network (a shared NAT, or a
	// proxy not in --trusted-proxies) and from a fresh one, on both servers.
	for i, from := range []struct {
		site *site
		ip   string
	}{{a, "203.0.113.5"}, {other, "203.0.113.5"}, {a, "2001:db8:1::9"}, {other, "192.0.2.200"}} {
		op := from.site.browser()
		if p := op.signInFrom(from.ip, adminToken); p.status != http.StatusSeeOther {
			t.Fatalf("right token %d from %s: %d, want 303", i+1, from.ip, p.status)
		}
		if p := op.get("/admin"); p.status != http.StatusOK {
			t.Fatalf("signed-in operator %d: %d", i+1, p.status)
		}
	}
}

// TestSignInCSRFIsIssuedByTheServer: a cookie/token pair the client picks
// is refused, as are a token for another cookie, a tampered one and an
// expired one; a form from another server of the deployment is good.
func TestSignInCSRFIsIssuedByTheServer(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Now())
	a := newSite(t, siteOptions{deps: func(d *dashboard.Deps) { d.Clock = clock }})
	b := newSite(t, siteOptions{deps: func(d *dashboard.Deps) { d.Clock = clock }})
	u, _ := url.Parse(a.url + "/admin/login")
	post := func(site *site, cookie, csrf string) int {
		br := site.browser()
		br.c.Jar.SetCookies(u, []*http.Cookie{{Name: "wr_admin_login", Value: cookie, Path: "/admin"}})
		return br.post("/admin/login", url.Values{"csrf_token": {csrf}, "token": {adminToken}}).status
	}
	// The attacker's own pair, double-submit style.
	picked := strings.Repeat("A", 43)
	if got := post(a, picked, picked); got != http.StatusForbidden {
		t.Fatalf("attacker-chosen pair: %d, want 403", got)
	}
	form := a.browser()
	csrf := attr(t, form.get("/admin/login"), `input[name="csrf_token"]`, "value")
	cookie := ""
	for _, c := range form.c.Jar.Cookies(u) {
		if c.Name == "wr_admin_login" {
			cookie = c.Value
		}
	}
	if cookie == "" || cookie == csrf {
		t.Fatalf("pre-session cookie %q, token %q: want a cookie that is not the token", cookie, csrf)
	}
	exp, mac, _ := strings.Cut(csrf, ".")
	for name, c := range map[string]struct{ cookie, csrf string }{
		"token for another cookie": {picked, csrf},
		"tampered signature":       {cookie, exp + "." + strings.Repeat("A", len(mac))},
		"extended expiry":          {cookie, base64.RawURLEncoding.EncodeToString([]byte{0, 0, 0, 0x7f, 0, 0, 0, 0}) + "." + mac},
		"no cookie":                {"", csrf},
	} {
		if got := post(a, c.cookie, c.csrf); got != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, got)
		}
	}
	// Issued by one server, good on another (they share the admin token).
	if got := post(b, cookie, csrf); got != http.StatusSeeOther {
		t.Fatalf("fresh form from another server: %d, want 303", got)
	}
	clock.Advance(16 * time.Minute)
	if got := post(a, cookie, csrf); got != http.StatusForbidden {
		t.Fatalf("form older than 15 minutes: %d, want 403", got)
	}
}

// revocations on the shared Redis, one prefix per test: what every server
// of a deployment shares.
func revocations(t *testing.T, rdb redis.UniversalClient) func(*dashboard.Deps) {
	r := dashboard.NewRedisRevocations(rdb, redistest.Prefix(t))
	return func(d *dashboard.Deps) { d.Revocations = r }
}

func sessionCookies(t *testing.T, b *browser) []*http.Cookie {
	u, _ := url.Parse(b.site.url + "/admin")
	old := b.c.Jar.Cookies(u)
	if len(old) == 0 {
		t.Fatal("no session cookie")
	}
	return old
}

// replay sends a stolen cookie to site: whether it opens the dashboard.
func replay(site *site, cookies []*http.Cookie) int {
	r := site.browser()
	u, _ := url.Parse(site.url + "/admin")
	r.c.Jar.SetCookies(u, cookies)
	return r.get("/admin").status
}

// TestSignOutOnOneServerIsHonouredByAnother: two dashboards sharing a Redis;
// a session signed out on one is refused by the other.
func TestSignOutOnOneServerIsHonouredByAnother(t *testing.T) {
	rev := revocations(t, redistest.Shared(t).Client(t))
	a, b := newSite(t, siteOptions{deps: rev}), newSite(t, siteOptions{deps: rev})
	op := a.browser()
	op.signIn()
	stolen := sessionCookies(t, op)
	if got := replay(b, stolen); got != http.StatusOK {
		t.Fatalf("session on the other server before sign-out: %d", got)
	}
	if p := op.postForm("/admin/logout", nil); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.status)
	}
	for name, site := range map[string]*site{"same server": a, "other server": b} {
		if got := replay(site, stolen); got != http.StatusSeeOther {
			t.Errorf("%s: signed-out session replayed: %d, want 303 to sign in", name, got)
		}
	}
}

// TestSignOutWhileRedisIsDown: the dashboard works without Redis; a
// sign-out then holds on the server that handled it at once, and on the
// others once Redis is back (the server sends it when Redis answers).
func TestSignOutWhileRedisIsDown(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	rev := revocations(t, rdb)
	a, b := newSite(t, siteOptions{deps: rev}), newSite(t, siteOptions{deps: rev})
	op := a.browser()
	op.signIn()
	stolen := sessionCookies(t, op)
	rs.Kill()
	if p := op.postForm("/admin/logout", nil); p.status != http.StatusSeeOther {
		t.Fatalf("sign out with Redis down: %d", p.status)
	}
	if got := replay(a, stolen); got != http.StatusSeeOther {
		t.Fatalf("same server, Redis down: replayed session %d, want 303", got)
	}
	if got := replay(b, stolen); got != http.StatusOK {
		t.Fatalf("other server, Redis down: %d, want 200 (documented: it cannot know yet)", got)
	}
	rs.Restart(t)
	// The first server sends the sign-out once Redis answers, by itself.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for replay(b, stolen) != http.StatusSeeOther {
		select {
		case <-ctx.Done():
			t.Fatal("the sign-out made while Redis was down never reached the other server")
		case <-time.After(50 * time.Millisecond): // Redis's client reconnects on its own time
		}
	}
}
