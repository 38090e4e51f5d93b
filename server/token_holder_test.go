package server_test

import (
	"testing"
	"time"
)

// Checkout servers keep calling verify and complete server to server, with
// no visitor cookie; a holder binds the token to the first one that sends it.
func TestVerifyBindsATokenToItsFirstHolder(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"bot_protection": {"proof_of_work": "off"}}`)
	r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	tok, _ := r.body["token"].(string)
	if tok == "" {
		t.Fatalf("enter: %s", r.raw)
	}
	e.clock.Advance(time.Second)
	if v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`"}`); v.body["valid"] != true {
		t.Fatalf("verify without a holder: %s", v.raw)
	}
	for i, c := range []struct {
		holder string
		valid  bool
	}{{"v:shop-visitor-1", true}, {"v:shop-visitor-1", true}, {"v:shop-visitor-2", false}} {
		v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "room": "sale", "holder": "`+c.holder+`"}`)
		if v.body["valid"] != c.valid || (!c.valid && v.body["reason"] != "other_holder") {
			t.Errorf("%d: holder %s: %s", i, c.holder, v.raw)
		}
	}
	wantError(t, e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "holder": "<script>"}`), 400, "invalid")
	if v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`"}`); v.body["valid"] != true {
		t.Errorf("verify without a holder after binding: %s", v.raw)
	}
	if c := e.do(nil, "POST", "/api/rooms/sale/complete", `{"token": "`+tok+`"}`); c.status != 200 {
		t.Fatalf("complete: %d %s", c.status, c.raw)
	}
	if v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "holder": "v:shop-visitor-1"}`); v.body["valid"] != false || v.body["reason"] != "completed" {
		t.Errorf("the holder after complete: %s", v.raw)
	}
}
