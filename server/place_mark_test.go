package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDegradedMintedCookiesBuyNoIntents (issue 22): in a room without proof
// of work a visitor cookie costs nothing (GET …/challenge draws one, before
// or during the outage), so it alone is no known visitor: only a visitor
// that held a place in this room's line (its place mark) leaves an intent.
// A mark for another room, or one copied onto another visitor cookie, does
// not pass; a visitor from before gets its intent by API and by form.
func TestDegradedMintedCookiesBuyNoIntents(t *testing.T) {
	t.Parallel()
	e := drillEnv(t, "", nil)
	e.putRoom("other", `{"paused": true, "bot_protection": {"proof_of_work": "off"}}`)
	olds := e.before(2)
	minted := func() *http.Client {
		c := e.browser()
		if r := e.do(c, "GET", "/api/rooms/sale/challenge", ""); r.status != 200 {
			t.Fatalf("challenge: %d %s", r.status, r.raw)
		}
		return c
	}
	early := minted() // minted before the outage: no place either
	elsewhere := e.browser()
	if r := e.do(elsewhere, "POST", "/api/rooms/other/enter", ""); r.status != 200 {
		t.Fatalf("enter other: %s", r.raw)
	}
	e.degrade(`{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off"}}`)

	for i := range 30 {
		c := minted()
		r := e.do(c, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`)
		wantError(t, r, http.StatusForbidden, "newcomer_refused")
		if i == 0 && !strings.Contains(r.raw, "held no place") {
			t.Fatalf("refusal does not name the problem: %s", r.raw)
		}
		if f := form(e, c, "1"); f.status != http.StatusForbidden {
			t.Fatalf("minted cookie by form: %d", f.status)
		}
	}
	wantError(t, e.do(early, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`), http.StatusForbidden, "newcomer_refused")
	wantError(t, e.do(elsewhere, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`), http.StatusForbidden, "newcomer_refused")

	// The first visitor's mark beside a minted cookie: bound to its own.
	u, _ := url.Parse(e.url)
	var mark *http.Cookie
	for _, ck := range olds[0].Jar.Cookies(u) {
		if ck.Name == "wr_place_sale" {
			mark = ck
		}
	}
	if mark == nil {
		t.Fatal("enter set no wr_place_sale cookie")
	}
	thief := minted()
	thief.Jar.SetCookies(u, []*http.Cookie{{Name: mark.Name, Value: mark.Value, Path: "/"}})
	wantError(t, e.do(thief, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`), http.StatusForbidden, "newcomer_refused")
	if n := e.intents(); n != 0 {
		t.Fatalf("%d intents from visitors who held no place", n)
	}

	if r := e.do(olds[0], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`); r.status != 202 {
		t.Fatalf("visitor from before the outage: %d %s", r.status, r.raw)
	}
	if f := form(e, olds[1], "1"); f.status != http.StatusSeeOther {
		t.Fatalf("visitor from before, by form: %d %s", f.status, f.raw)
	}
	if n := e.intents(); n != 2 {
		t.Fatalf("%d intents, want the 2 of the visitors from before", n)
	}
}
