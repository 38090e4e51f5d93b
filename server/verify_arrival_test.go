package server_test

import (
	"testing"
	"time"
)

// Only the shop's verify (its key or the admin token), the gate and forward
// auth are a visitor arriving at checkout: an anonymous POST
// /api/tokens/verify only checks, so whoever holds a copy of a squatter's
// token cannot keep its slot from lapsing as a no-show after
// arrival_window_s. A credential that is not the shop's is refused, not
// taken for an anonymous check.
func TestOnlyTheShopsVerifyIsAnArrival(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"bot_protection": {"proof_of_work": "off"}, "capacity": 3, "jitter_ms": 0, "arrival_window_s": 60, "abandon_after_s": 3600}`)
	e.putRoom("drop", `{"bot_protection": {"proof_of_work": "off"}}`)
	tokens := map[string]string{}
	for _, who := range []string{"anonymous", "shop", "admin"} {
		r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
		tok, _ := r.body["token"].(string)
		if tok == "" {
			t.Fatalf("%s: enter: %s", who, r.raw)
		}
		tokens[who] = tok
	}
	creds := map[string][]string{
		"anonymous": nil,
		"shop":      {"Authorization", "Bearer " + e.line.Keys().ShopKey("sale")},
		"admin":     {"Authorization", "Bearer " + adminToken},
	}
	verify := func(who string) resp {
		return e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tokens[who]+`", "room": "sale"}`, creds[who]...)
	}
	e.clock.Advance(time.Second)
	for who := range tokens {
		if v := verify(who); v.status != 200 || v.body["valid"] != true {
			t.Fatalf("%s verify within the window: %d %s", who, v.status, v.raw)
		}
	}
	// A wrong credential is named, and marks nothing.
	for _, cred := range []string{
		"Bearer " + e.line.Keys().ShopKey("drop"),
		"Bearer wrs_0000000000000000000000000000000000000000",
	} {
		wantError(t, e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tokens["anonymous"]+`"}`, "Authorization", cred), 403, "credential_forbidden")
	}
	e.clock.Advance(time.Minute)
	if v := verify("anonymous"); v.body["valid"] != false || v.body["reason"] != "no_show" {
		t.Errorf("a token only verified anonymously, after arrival_window_s: %s, want no_show", v.raw)
	}
	for _, who := range []string{"shop", "admin"} {
		if v := verify(who); v.body["valid"] != true {
			t.Errorf("a token the %s verified, after arrival_window_s: %s, want valid", who, v.raw)
		}
	}
}
