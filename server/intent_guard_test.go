package server_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// drillEnv is a degraded server (a drill) trusting the loopback proxy, with
// room "sale" known and visitors who entered before the outage.
func drillEnv(t *testing.T, settings string, edit func(*server.Config)) *degradedEnv {
	t.Helper()
	e := newDegradedEnvWith(t, func(c *server.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		if edit != nil {
			edit(c)
		}
	})
	e.putRoom("sale", `{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off"}}`)
	return e
}

// before enters n visitors while the line is up: they hold a cookie from before.
func (e *degradedEnv) before(n int) []*http.Client {
	var out []*http.Client
	for range n {
		c := e.browser()
		if r := e.do(c, "POST", "/api/rooms/sale/enter", ""); r.body["state"] != "waiting" {
			e.t.Fatalf("enter before the outage: %s", r.raw)
		}
		out = append(out, c)
	}
	return out
}

func (e *degradedEnv) degrade(settings string) {
	e.t.Helper()
	e.putRoom("sale", settings) // also cached at once: degraded mode reads the cache
	if r := e.admin("POST", "/admin/api/degrade", `{"on": true}`); r.body["degraded"] != true {
		e.t.Fatalf("drill: %s", r.raw)
	}
}

func (e *degradedEnv) intents() int64 {
	e.t.Helper()
	n, err := e.ob.Counts(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n.Total()
}

func form(e *degradedEnv, c *http.Client, qty string, hdr ...string) resp {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url+"/rooms/sale/accept", strings.NewReader(url.Values{"quantity": {qty}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := noFollow.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, raw: string(b)}
}

// The attack of issue 9: cookieless intents, each a new visitor with its
// own open intent. Without an identity from before the outage (and no
// NewcomerCheck to pass), none is taken and no identity is handed out.
func TestDegradedCookielessFloodMintsNoIdentities(t *testing.T) {
	t.Parallel()
	e := drillEnv(t, "", nil)
	old := e.before(1)[0]
	e.degrade(`{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off"}}`)
	for i := range 50 {
		r := e.do(nil, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "sneaker-drop", "quantity": 3}}`)
		wantError(t, r, http.StatusForbidden, "newcomer_refused")
		if r.header.Get("Set-Cookie") != "" {
			t.Fatalf("request %d was handed a cookie: %q", i, r.header.Get("Set-Cookie"))
		}
	}
	// Made-up visitor cookies are no better: waitroom knows the ids it handed out.
	for i := range 20 {
		r := e.do(nil, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 3}}`, "Cookie", "wr_vid="+queue.RandomID())
		wantError(t, r, http.StatusForbidden, "newcomer_refused")
		if i == 0 && r.header.Get("Set-Cookie") != "" {
			t.Fatalf("a made-up cookie was answered with a cookie: %q", r.header.Get("Set-Cookie"))
		}
	}
	if f := form(e, http.DefaultClient, "2"); f.status != http.StatusForbidden || f.header.Get("Set-Cookie") != "" {
		t.Errorf("cookieless form: %d, cookie %q; want 403 and none", f.status, f.header.Get("Set-Cookie"))
	}
	if n := e.intents(); n != 0 {
		t.Fatalf("%d intents taken from newcomers", n)
	}
	// A visitor from before the outage keeps its identity: one open intent.
	first := e.do(old, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`)
	again := e.do(old, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 2}}`)
	if first.status != 202 || again.body["intent_id"] != first.body["intent_id"] || e.intents() != 1 {
		t.Fatalf("old visitor: %d %s, then %s", first.status, first.raw, again.raw)
	}
}

// admitAll is a NewcomerCheck that lets everyone in, as a solved challenge would.
type admitAll struct{ asked int }

func (a *admitAll) AdmitNewcomer(echo.Context, string, queue.Settings) error { a.asked++; return nil }

func TestDegradedNewcomerCheckHook(t *testing.T) {
	t.Parallel()
	check := &admitAll{}
	e := drillEnv(t, "", func(c *server.Config) { c.Newcomers = check })
	e.degrade(`{"paused": true, "bot_protection": {"proof_of_work": "off"}}`)
	c := e.browser()
	r := e.do(c, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`)
	if r.status != 202 || check.asked != 1 {
		t.Fatalf("admitted newcomer: %d %s, check asked %d times", r.status, r.raw, check.asked)
	}
	// Now a visitor: asking again needs no check and gives the same intent.
	if again := e.do(c, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`); again.body["intent_id"] != r.body["intent_id"] || check.asked != 1 {
		t.Errorf("again: %s, check asked %d times", again.raw, check.asked)
	}
}

func TestDegradedMaxQuantity(t *testing.T) {
	t.Parallel()
	e := drillEnv(t, "", nil)
	vs := e.before(2)
	e.degrade(`{"paused": true, "product_id": "sneaker-drop", "max_quantity": 3, "bot_protection": {"proof_of_work": "off"}}`)
	for _, q := range []string{"4", "0", "2.5", `"3"`, "1e9"} {
		r := e.do(vs[0], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": `+q+`}}`)
		wantError(t, r, http.StatusBadRequest, "invalid")
		if r.body["error"].(map[string]any)["field"] != "quantity" {
			t.Errorf("quantity %s: %s, want field quantity", q, r.raw)
		}
	}
	if r := e.do(vs[0], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 3}}`); r.status != 202 {
		t.Errorf("quantity 3: %d %s", r.status, r.raw)
	}
	// The form: its input offers up to the cap, and the server holds to it.
	_, doc := e.page(vs[1], "/rooms/sale/accept")
	if max, _ := testid(doc, "accept-quantity").Attr("data-max"); max != "3" || testid(doc, "accept-quantity").Find("option").Length() != 3 {
		t.Errorf("quantity input: data-max %q with %d options, want 3", max, testid(doc, "accept-quantity").Find("option").Length())
	}
	if f := form(e, vs[1], "4"); f.status != http.StatusBadRequest || !strings.Contains(f.raw, "choose 1 to 3") {
		t.Errorf("form quantity 4: %d", f.status)
	}
	if f := form(e, vs[1], "3"); f.status != http.StatusSeeOther {
		t.Errorf("form quantity 3: %d", f.status)
	}
	if n := e.intents(); n != 2 {
		t.Errorf("%d intents, want 2", n)
	}
}

// While Redis is down each server counts the per-client limits itself.
func TestDegradedIntentLimitsPerIP(t *testing.T) {
	t.Parallel()
	e := drillEnv(t, "", nil)
	vs := e.before(5)
	e.degrade(`{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off", "enters_per_ip_per_minute": 2}}`)
	ip := []string{"X-Forwarded-For", "203.0.113.20"}
	for i := range 2 {
		if r := e.do(vs[i], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`, ip...); r.status != 202 {
			t.Fatalf("intent %d: %d %s", i, r.status, r.raw)
		}
	}
	// A repeat is no new intent.
	if r := e.do(vs[0], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`, ip...); r.status != 202 {
		t.Fatalf("repeat: %d %s", r.status, r.raw)
	}
	wantLimited(t, e.do(vs[2], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`, ip...), "rate_limited", "enters_per_ip_per_minute")
	if f := form(e, vs[2], "1", ip...); f.status != http.StatusTooManyRequests || f.header.Get("Retry-After") == "" {
		t.Errorf("form over the limit: %d, Retry-After %q", f.status, f.header.Get("Retry-After"))
	}
	if r := e.do(vs[2], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`, "X-Forwarded-For", "203.0.113.21"); r.status != 202 {
		t.Errorf("another address: %d %s", r.status, r.raw)
	}

	e.putRoom("sale", `{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off", "places_per_ip": 1}}`)
	ip = []string{"X-Forwarded-For", "203.0.113.22"}
	if f := form(e, vs[3], "1", ip...); f.status != http.StatusSeeOther {
		t.Fatalf("form within places_per_ip: %d %s", f.status, f.raw)
	}
	if f := form(e, vs[4], "1", ip...); f.status != http.StatusTooManyRequests || !strings.Contains(f.raw, "places_per_ip") {
		t.Errorf("form over places_per_ip: %d", f.status)
	}
}
