package gate_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func TestProxySendsBrowsersToThePageAndAPIClientsA429(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) { s.Paused = true }) // everyone waits
	cases := []struct {
		name, accept string
		redirect     bool
	}{
		{"html", "text/html", true},
		{"browser", browserAccept, true},
		{"any", "*/*", false},
		{"json", "application/json", false},
		{"problem json", "application/problem+json", false},
		{"missing", "", false},
		{"json before html", "application/json, text/html;q=0.5", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.accept != "" {
				hdr = append(hdr, "Accept: "+c.accept)
			}
			res := f.do(client(nil), "GET", "/checkout/cart?size=42", hdr...)
			if c.redirect {
				if res.status != http.StatusFound || res.header.Get("Location") != f.url+"/rooms/"+room {
					t.Fatalf("status %d, Location %q; want 302 to the waiting page", res.status, res.header.Get("Location"))
				}
				if cookie(res, "wr_return") == nil {
					t.Error("no wr_return cookie: the browser would not come back to /checkout/cart")
				}
				return
			}
			if res.status != http.StatusTooManyRequests {
				t.Fatalf("status %d, want 429; body %s", res.status, res.body)
			}
			if ra, err := strconv.Atoi(res.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("Retry-After %q, want whole seconds ≥ 1", res.header.Get("Retry-After"))
			}
			j := res.json
			if j["waiting_room_url"] != f.url+"/rooms/"+room || j["state"] != "waiting" {
				t.Errorf("body %s", res.body)
			}
			if id, _ := j["ticket"].(string); len(id) != 32 {
				t.Errorf("ticket %v, want a ticket id", j["ticket"])
			}
			if pos, _ := j["position"].(float64); pos < 1 {
				t.Errorf("position %v, want ≥ 1", j["position"])
			}
			if ms, _ := j["retry_after_ms"].(float64); ms != 2000 {
				t.Errorf("retry_after_ms %v, want the first tier's 2000", j["retry_after_ms"])
			}
			if e, _ := j["error"].(map[string]any); e["code"] != "in_line" {
				t.Errorf("error %v, want code in_line", j["error"])
			}
			if cookie(res, "wr_vid") == nil {
				t.Error("no wr_vid cookie: the client's next ask would take a new place")
			}
		})
	}
	if n := len(f.up.requests()); n != 0 {
		t.Errorf("the upstream saw %d requests, want none", n)
	}
}

func TestProxyKeepsAnAPIClientsPlace(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) { s.Paused = true })
	c := browser() // keeps cookies, as an API client must
	first := f.do(c, "POST", "/api/orders", "Accept: application/json")
	again := f.do(c, "POST", "/api/orders", "Accept: application/json")
	if first.status != 429 || again.json["ticket"] != first.json["ticket"] {
		t.Errorf("tickets %v then %v, want one place kept", first.json["ticket"], again.json["ticket"])
	}
	// Waitroom's own status API sees the same ticket: one origin, one cookie.
	st := f.do(c, "GET", "/api/rooms/"+room+"/tickets/"+first.json["ticket"].(string))
	if st.status != 200 || st.json["state"] != "waiting" {
		t.Errorf("status API: %d %s", st.status, st.body)
	}
}

func TestProxyPassesUnprotectedPathsStraightThrough(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) { s.Paused = true })
	res := f.do(client(nil), "GET", "/about?x=1", "Waitroom-Ticket: forged", "Waitroom_Subject: forged",
		"Cookie: session=s1; wr_vid=0123456789abcdef0123456789abcdef")
	if res.status != 200 || res.body != "upstream GET /about?x=1" {
		t.Fatalf("status %d body %q", res.status, res.body)
	}
	got := f.up.last(t)
	for k := range got.Header {
		if strings.HasPrefix(strings.ToLower(k), "waitroom") {
			t.Errorf("a client's %s header reached the upstream", k)
		}
	}
	if ck := got.Header.Get("Cookie"); ck != "session=s1" {
		t.Errorf("upstream Cookie %q, want the shop's own cookie only", ck)
	}
	if got.Header.Get("X-Forwarded-For") == "" {
		t.Error("no X-Forwarded-For")
	}
	// Preflights carry no credentials; the waiting room's own paths never
	// reach the upstream.
	if res := f.do(client(nil), "OPTIONS", "/api/orders"); res.status != 200 {
		t.Errorf("OPTIONS: %d", res.status)
	}
	if res := f.do(client(nil), "GET", "/healthz"); res.status != 200 || strings.HasPrefix(res.body, "upstream") {
		t.Errorf("/healthz: %d %q", res.status, res.body)
	}
	if s := f.meter.Snapshot(); s.Calls != 0 {
		t.Errorf("meter counted %d calls, want none: only protected calls are measured", s.Calls)
	}
}

// A browser is sent to the waiting page, is admitted there, and the page
// sends it to the room's target_url with a hand-off code (?wr_code=) once;
// the gate redeems it for the token, keeps that in a cookie and returns the
// browser to where it was going.
func TestProxyBrowserComesBackAfterAdmission(t *testing.T) {
	f := newFixture(t, nil)
	b := browser()
	res := f.do(b, "GET", "/checkout/cart?size=42", "Accept: "+browserAccept)
	if res.status != http.StatusFound {
		t.Fatalf("status %d, want 302", res.status)
	}
	page := f.do(b, "GET", res.header.Get("Location"), "Accept: "+browserAccept)
	if page.status != 200 || !strings.Contains(page.body, "data-waitroom") {
		t.Fatalf("waiting page: %d", page.status)
	}
	// What the page's script reads: the same visitor's ticket, admitted on
	// the fast track of an empty line.
	tk := f.do(b, "POST", "/api/rooms/"+room+"/enter")
	redirect, _ := tk.json["redirect_url"].(string)
	if tk.json["state"] != "admitted" || !strings.HasPrefix(redirect, "/checkout/?wr_code=h.") {
		t.Fatalf("ticket %s", tk.body)
	}
	f.clock.Advance(time.Second) // the page waits for orderable_at

	land := f.do(b, "GET", redirect, "Accept: "+browserAccept)
	if land.status != http.StatusFound || land.header.Get("Location") != "/checkout/cart?size=42" {
		t.Fatalf("landing: %d to %q, want 302 to /checkout/cart?size=42", land.status, land.header.Get("Location"))
	}
	if ck := cookie(land, "wr_token"); ck == nil || !ck.HttpOnly {
		t.Fatal("landing set no HttpOnly wr_token cookie")
	}
	if len(f.up.requests()) != 0 {
		t.Error("the landing reached the upstream")
	}
	for _, p := range []string{"/checkout/cart?size=42", "/checkout/pay"} {
		res := f.do(b, "GET", p, "Accept: "+browserAccept)
		if res.status != 200 {
			t.Fatalf("%s: status %d, want the upstream's 200", p, res.status)
		}
		up := f.up.last(t)
		if up.Header.Get("Waitroom-Ticket") != tk.json["ticket"] || up.URL.Query().Has("wr_token") || up.URL.Query().Has("wr_code") {
			t.Errorf("upstream saw ticket %q, query %q", up.Header.Get("Waitroom-Ticket"), up.URL.RawQuery)
		}
	}
	if s := f.meter.Snapshot(); s.Calls != 2 || s.InFlight != 0 {
		t.Errorf("meter: %+v, want 2 calls, none in flight", s)
	}
}

func TestProxyLandingIgnoresAForeignReturn(t *testing.T) {
	f := newFixture(t, nil)
	evil := "Ly9ldmlsLmV4YW1wbGUveA" // base64url of //evil.example/x
	res := f.do(client(nil), "GET", "/checkout/?wr_token=a.b.c&x=1", "Cookie: wr_return="+evil)
	if res.status != http.StatusFound || res.header.Get("Location") != "/checkout/?x=1" {
		t.Errorf("landing: %d to %q, want 302 to /checkout/?x=1", res.status, res.header.Get("Location"))
	}
	// Not a token: no cookie is made of it.
	res = f.do(client(nil), "GET", "/checkout/?wr_token=%3Cscript%3E")
	if cookie(res, "wr_token") != nil {
		t.Error("a cookie was set from query text that is no token")
	}
}

func TestProxyTakesABearerToken(t *testing.T) {
	f := newFixture(t, nil)
	tk, tok := f.admit(vid)
	f.clock.Advance(time.Second)
	f.pause(true)
	res := f.do(client(nil), "GET", "/checkout/x", "Accept: application/json", "Authorization: Bearer "+tok, owner)
	if res.status != 200 || f.up.last(t).Header.Get("Waitroom-Ticket") != tk.ID {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	if sub := f.up.last(t).Header.Get("Waitroom-Subject"); sub != token.VisitorSubject(vid) {
		t.Errorf("Waitroom-Subject %q", sub)
	}
	// The shop's own Bearer credential does not hide the gate's cookie.
	res = f.do(client(nil), "GET", "/checkout/x", "Accept: application/json",
		"Authorization: Bearer shop.session.token", "Cookie: wr_token="+tok+"; wr_vid="+vid)
	if res.status != 200 {
		t.Errorf("shop bearer + token cookie: status %d: %s", res.status, res.body)
	}
	if got := f.up.last(t).Header.Get("Authorization"); got != "Bearer shop.session.token" {
		t.Errorf("upstream Authorization %q: the shop's credential must go on untouched", got)
	}
}

// The jitter only spreads a batch if nobody starts before nbf, which has
// milliseconds: a token 400 ms early is held for exactly 400 ms, where
// jwt's default second precision would have let it in.
func TestProxyHoldsATokenUntilItsTurn(t *testing.T) {
	f := newFixture(t, nil)
	tk, tok := f.admit(vid) // nbf = t0 + 500 ms
	if got := tk.OrderableAt.Sub(t0); got != 500*time.Millisecond {
		t.Fatalf("orderable in %v, want 500ms", got)
	}
	f.clock.Advance(100 * time.Millisecond)

	res := f.do(client(nil), "POST", "/api/orders", "Accept: application/json", "Authorization: Bearer "+tok, owner)
	if res.status != http.StatusTooEarly {
		t.Fatalf("status %d, want 425: %s", res.status, res.body)
	}
	if res.header.Get("Retry-After") != "1" || res.json["retry_after_ms"] != 400.0 {
		t.Errorf("Retry-After %q, retry_after_ms %v; want 1 and 400", res.header.Get("Retry-After"), res.json["retry_after_ms"])
	}
	if res.json["ticket"] != tk.ID || res.json["orderable_at"] != "2026-11-29T12:00:00.500Z" || res.json["state"] != "admitted" {
		t.Errorf("body %s", res.body)
	}
	b := f.do(client(nil), "GET", "/checkout/", "Accept: text/html", "Cookie: wr_token="+tok+"; wr_vid="+vid)
	if b.status != http.StatusFound || b.header.Get("Location") != f.url+"/rooms/"+room {
		t.Errorf("browser: %d to %q, want the waiting page, which counts down", b.status, b.header.Get("Location"))
	}

	f.clock.Advance(399 * time.Millisecond)
	if res := f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner); res.status != http.StatusTooEarly || res.json["retry_after_ms"] != 1.0 {
		t.Fatalf("1 ms early: %d %v", res.status, res.json["retry_after_ms"])
	}
	f.clock.Advance(time.Millisecond)
	if res := f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner); res.status != 200 {
		t.Fatalf("at nbf: %d %s", res.status, res.body)
	}
	if n := len(f.up.requests()); n != 1 {
		t.Errorf("upstream saw %d requests, want 1", n)
	}
}

// An API client that keeps cookies needs nothing but asking again: the
// gate enters it, hands it the token when admitted, and lets it through
// when its turn starts.
func TestProxyAdmitsAnAPIClientThatAsksAgain(t *testing.T) {
	f := newFixture(t, nil)
	c := browser()
	res := f.do(c, "POST", "/api/orders", "Accept: application/json")
	if res.status != http.StatusTooEarly || res.json["token"] == nil || cookie(res, "wr_token") == nil {
		t.Fatalf("first ask: %d %s, want 425 with the token", res.status, res.body)
	}
	f.clock.Advance(time.Duration(res.json["retry_after_ms"].(float64)) * time.Millisecond)
	res = f.do(c, "POST", "/api/orders", "Accept: application/json")
	if res.status != 200 {
		t.Fatalf("second ask: %d %s", res.status, res.body)
	}
	if cookie(res, "wr_token") == nil || cookie(res, "wr_token").MaxAge >= 0 {
		t.Error("the completing answer did not clear the token cookie")
	}
}

func TestProxyRefusesBadTokens(t *testing.T) {
	f := newFixture(t, nil)
	_, done := f.admit(vid)
	f.clock.Advance(time.Second)
	if v, err := f.line.Complete(context.Background(), done, room); err != nil || !v.Valid {
		t.Fatalf("complete: %v %v", v, err)
	}
	f.pause(true) // so a refused client waits in line
	other, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	good := token.EntryClaims{Room: room, Subject: "v1", TicketID: "0123456789abcdef0123456789abcdef",
		NotBefore: now.Add(-time.Second), ExpiresAt: now.Add(time.Minute)}
	expired, wrongRoom := good, good
	expired.NotBefore, expired.ExpiresAt = now.Add(-time.Hour), now.Add(-time.Second)
	wrongRoom.Room = "other"
	cases := map[string]string{
		"completed":  done,
		"forged":     f.sign(other, good),
		"expired":    f.sign(f.keys, expired),
		"wrong_room": f.sign(f.keys, wrongRoom),
		"malformed":  "a.b.c",
	}
	for reason, tok := range cases {
		t.Run(reason, func(t *testing.T) {
			res := f.do(client(nil), "POST", "/api/orders", "Accept: application/json", "Cookie: wr_token="+tok)
			if res.status != http.StatusTooManyRequests {
				t.Fatalf("status %d, want 429: %s", res.status, res.body)
			}
			if msg := res.json["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "("+reason+")") {
				t.Errorf("message %q does not say %s", msg, reason)
			}
			if ck := cookie(res, "wr_token"); ck == nil || ck.MaxAge >= 0 {
				t.Error("the refused token's cookie was not cleared")
			}
			b := f.do(client(nil), "GET", "/checkout/", "Accept: text/html", "Authorization: Bearer "+tok, owner)
			if b.status != http.StatusFound {
				t.Errorf("browser: status %d, want 302 to the waiting page", b.status)
			}
		})
	}
	if n := len(f.up.requests()); n != 0 {
		t.Errorf("upstream saw %d requests, want none", n)
	}
}

// A 2xx answer on a Complete path hands the slot back after the answer;
// a failed order keeps it, so the visitor may try again.
func TestProxyCompletePathHandsTheSlotBack(t *testing.T) {
	f := newFixture(t, nil)
	_, tok := f.admit(vid)
	f.clock.Advance(time.Second)
	ctx := context.Background()

	res := f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner, "X-Test-Fail: 1")
	f.settle()
	if res.status != http.StatusConflict {
		t.Fatalf("status %d", res.status)
	}
	if v, _ := f.line.Verify(ctx, tok, room); !v.Valid {
		t.Fatalf("a failed order freed the slot: %s", v.Reason)
	}
	// A protected path that is not a Complete path keeps the slot too.
	if res := f.do(client(nil), "GET", "/checkout/", "Authorization: Bearer "+tok, owner); res.status != 200 {
		t.Fatalf("status %d", res.status)
	}
	res = f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner)
	f.settle()
	if res.status != 200 {
		t.Fatalf("status %d", res.status)
	}
	if v, _ := f.line.Verify(ctx, tok, room); v.Valid || v.Reason != "completed" {
		t.Fatalf("after the order: valid %v reason %q, want completed", v.Valid, v.Reason)
	}
	st, err := f.line.Stats(ctx, room, f.clock.Now())
	if err != nil || st.Active != 0 || st.CompletedTotal != 1 {
		t.Errorf("stats %+v %v, want the slot free", st, err)
	}
	f.pause(true)
	if res := f.do(client(nil), "POST", "/api/orders", "Accept: application/json", "Authorization: Bearer "+tok, owner); res.status != http.StatusTooManyRequests {
		t.Errorf("the completed token: status %d, want 429", res.status)
	}
}

// With Redis gone the gate cannot tell whether a slot is still held: a
// token that verifies offline passes (as at a checkout verifying through
// the JWKS), and a client without one is told to come back.
func TestProxyWithRedisDown(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { _ = dead.Close() })
	f := newFixtureWith(t, dead, nil)
	now := f.clock.Now()
	tok := f.sign(f.keys, token.EntryClaims{Room: room, Subject: token.VisitorSubject(vid), TicketID: "0123456789abcdef0123456789abcdef",
		NotBefore: now.Add(-time.Second), ExpiresAt: now.Add(time.Minute)})

	if res := f.do(client(nil), "GET", "/checkout/", "Authorization: Bearer "+tok, owner); res.status != 200 {
		t.Errorf("valid token: %d %s", res.status, res.body)
	}
	// Who else may hold it is in Redis: a copy fails closed.
	if res := f.do(client(nil), "GET", "/checkout/", "Accept: application/json", "Authorization: Bearer "+tok); res.status != http.StatusServiceUnavailable {
		t.Errorf("copied token: %d %s, want 503", res.status, res.body)
	}
	early := f.sign(f.keys, token.EntryClaims{Room: room, Subject: "v1", TicketID: "0123456789abcdef0123456789abcdef",
		NotBefore: now.Add(250 * time.Millisecond), ExpiresAt: now.Add(time.Minute)})
	if res := f.do(client(nil), "GET", "/checkout/", "Authorization: Bearer "+early); res.status != http.StatusTooEarly || res.json["retry_after_ms"] != 250.0 {
		t.Errorf("early token: %d %s", res.status, res.body)
	}
	res := f.do(client(nil), "GET", "/checkout/", "Accept: application/json")
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
		t.Errorf("no token: %d %s, want 503 with Retry-After", res.status, res.body)
	}
	if res := f.do(client(nil), "GET", "/checkout/", "Accept: text/html"); res.status != http.StatusFound {
		t.Errorf("browser: %d, want the waiting page (it shows degraded mode)", res.status)
	}
}

func TestNewProxyChecksItsConfig(t *testing.T) {
	f := newFixture(t, nil)
	up, _ := url.Parse("http://127.0.0.1:1")
	good := gate.ProxyConfig{Upstream: up, Protect: []string{"/checkout/*"}, Room: room, Line: f.line, PublicURL: f.url}
	if _, err := gate.NewProxy(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*gate.ProxyConfig){
		"no upstream":    func(c *gate.ProxyConfig) { c.Upstream = nil },
		"relative":       func(c *gate.ProxyConfig) { c.Upstream = &url.URL{Path: "/x"} },
		"no protect":     func(c *gate.ProxyConfig) { c.Protect = nil },
		"bad pattern":    func(c *gate.ProxyConfig) { c.Protect = []string{"/[x"} },
		"bad complete":   func(c *gate.ProxyConfig) { c.Complete = []string{"orders"} },
		"bad room":       func(c *gate.ProxyConfig) { c.Room = "Shop!" },
		"no line":        func(c *gate.ProxyConfig) { c.Line = nil },
		"bad public url": func(c *gate.ProxyConfig) { c.PublicURL = "example.com" },
	}
	for name, edit := range bad {
		c := good
		edit(&c)
		if _, err := gate.NewProxy(c); err == nil || !strings.HasPrefix(err.Error(), "gate: new proxy: ") {
			t.Errorf("%s: err %v, want a gate: new proxy error", name, err)
		}
	}
}

func TestProxyAfterTheSale(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) {
		ended := t0.Add(-time.Minute)
		s.EndsAt = &ended
	})
	res := f.do(client(nil), "GET", "/checkout/", "Accept: application/json")
	if res.status != http.StatusForbidden || res.json["state"] != "closed" || res.json["error"].(map[string]any)["code"] != "closed" {
		t.Errorf("API: %d %s, want 403 closed", res.status, res.body)
	}
	if res := f.do(client(nil), "GET", "/checkout/", "Accept: text/html"); res.status != http.StatusFound {
		t.Errorf("browser: %d, want the waiting page, which says the sale ended", res.status)
	}
}

// TestProxySoldOutAndFull: a sold out sale answers API clients 403
// sold_out; a full line 503 line_full with a Retry-After, no place taken.
func TestProxySoldOutAndFull(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) { s.SoldOut = true })
	res := f.do(client(nil), "GET", "/checkout/", "Accept: application/json")
	if res.status != http.StatusForbidden || res.json["state"] != "sold_out" || res.json["error"].(map[string]any)["code"] != "sold_out" {
		t.Errorf("sold out: %d %s, want 403 sold_out", res.status, res.body)
	}
	f = newFixture(t, func(s *queue.Settings) { s.Paused, s.MaxWaiting = true, 1 })
	if res := f.do(client(nil), "GET", "/checkout/", "Accept: application/json"); res.status != http.StatusTooManyRequests {
		t.Fatalf("first into the line: %d %s", res.status, res.body)
	}
	res = f.do(client(nil), "GET", "/checkout/", "Accept: application/json")
	if res.status != http.StatusServiceUnavailable || res.json["state"] != "full" || res.json["error"].(map[string]any)["code"] != "line_full" ||
		res.header.Get("Retry-After") != "15" {
		t.Errorf("full: %d %v %s, want 503 line_full, Retry-After 15", res.status, res.header, res.body)
	}
}
