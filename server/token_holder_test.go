package server_test

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// Checkout servers keep calling verify and complete server to server, with
// no visitor cookie; a holder binds the token to the first one that sends
// it, and only the shop may ask for that: its room's shop key or the admin
// token (issue 22: an anonymous binding let a thief lock the owner out).
func TestVerifyBindsATokenToItsFirstHolder(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"bot_protection": {"proof_of_work": "off"}}`)
	e.putRoom("drop", `{"bot_protection": {"proof_of_work": "off"}}`)
	r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	tok, _ := r.body["token"].(string)
	if tok == "" {
		t.Fatalf("enter: %s", r.raw)
	}
	shop := "Bearer " + e.line.Keys().ShopKey("sale")
	e.clock.Advance(time.Second)
	if v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`"}`); v.body["valid"] != true {
		t.Fatalf("verify without a holder: %s", v.raw)
	}
	bind := `{"token": "` + tok + `", "room": "sale", "holder": "v:thief"}`
	wantError(t, e.do(nil, "POST", "/api/tokens/verify", bind), 401, "holder_unauthenticated")
	for name, cred := range map[string]string{
		"another room's key": "Bearer " + e.line.Keys().ShopKey("drop"),
		"a made-up key":      "Bearer wrs_0000000000000000000000000000000000000000",
		"the token itself":   "Bearer " + tok,
	} {
		if r := e.do(nil, "POST", "/api/tokens/verify", bind, "Authorization", cred); r.status != 403 || r.body["error"].(map[string]any)["code"] != "holder_forbidden" {
			t.Errorf("%s: %d %s, want 403 holder_forbidden", name, r.status, r.raw)
		}
	}
	// Without room, the token's own room's key is the one asked for.
	wantError(t, e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "holder": "v:thief"}`,
		"Authorization", "Bearer "+e.line.Keys().ShopKey("drop")), 403, "holder_forbidden")
	for i, c := range []struct {
		holder, cred string
		valid        bool
	}{{"v:shop-visitor-1", shop, true}, {"v:shop-visitor-1", shop, true}, {"v:shop-visitor-2", "Bearer " + adminToken, false}} {
		v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "room": "sale", "holder": "`+c.holder+`"}`, "Authorization", c.cred)
		if v.body["valid"] != c.valid || (!c.valid && v.body["reason"] != "other_holder") {
			t.Errorf("%d: holder %s: %s", i, c.holder, v.raw)
		}
	}
	wantError(t, e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "holder": "<script>"}`, "Authorization", shop), 400, "invalid")
	if v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`"}`); v.body["valid"] != true {
		t.Errorf("verify without a holder after binding: %s", v.raw)
	}
	if c := e.do(nil, "POST", "/api/rooms/sale/complete", `{"token": "`+tok+`"}`); c.status != 200 {
		t.Fatalf("complete: %d %s", c.status, c.raw)
	}
	if v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "holder": "v:shop-visitor-1"}`, "Authorization", shop); v.body["valid"] != false || v.body["reason"] != "completed" {
		t.Errorf("the holder after complete: %s", v.raw)
	}
}

// The admitted visitor's redirect carries a single-use hand-off code, not
// the token; the shop redeems it server to server. With a holder (the
// shop's key) the token is bound to the redeemer, ending an earlier hold.
func TestRedeemTradesAHandoffCodeOnceForTheToken(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"bot_protection": {"proof_of_work": "off"}, "target_url": "https://shop.example.com/checkout?x=1"}`)
	b := e.browser()
	r := e.do(b, "POST", "/api/rooms/sale/enter", "")
	tok, _ := r.body["token"].(string)
	redirect, _ := r.body["redirect_url"].(string)
	u, err := url.Parse(redirect)
	if err != nil || tok == "" || u.Host != "shop.example.com" || u.Query().Get("x") != "1" || u.Query().Has("wr_token") ||
		!strings.HasPrefix(u.Query().Get("wr_code"), "h.") || strings.Contains(redirect, tok) {
		t.Fatalf("redirect_url %q: want the target with a hand-off code and without the token", redirect)
	}
	code := u.Query().Get("wr_code")
	e.clock.Advance(time.Second)
	shop := "Bearer " + e.line.Keys().ShopKey("sale")
	bindThief := `{"token": "` + tok + `", "room": "sale", "holder": "v:thief"}`
	if v := e.do(nil, "POST", "/api/tokens/verify", bindThief, "Authorization", shop); v.body["valid"] != true {
		t.Fatalf("the thief's hold, first: %s", v.raw)
	}
	redeem := func(body string, hdr ...string) resp { return e.do(nil, "POST", "/api/tokens/redeem", body, hdr...) }
	wantError(t, redeem(`{"code": "`+code+`", "room": "sale", "holder": "v:owner"}`), 401, "holder_unauthenticated")
	wantError(t, redeem(`{"room": "sale"}`), 400, "invalid")
	wantError(t, redeem(`{"code": "`+code+`"}`), 400, "invalid")
	wantError(t, redeem(`{"code": "`+code+`", "room": "drop"}`), 400, "code_invalid")
	wantError(t, redeem(`{"code": "h.AAAA", "room": "sale"}`), 400, "code_invalid")
	got := redeem(`{"code": "`+code+`", "room": "sale", "holder": "v:owner"}`, "Authorization", shop)
	if got.status != 200 || got.body["token"] != tok || got.body["room"] != "sale" || got.body["ticket"] != r.body["ticket"] {
		t.Fatalf("redeem: %d %s", got.status, got.raw)
	}
	wantError(t, redeem(`{"code": "`+code+`", "room": "sale"}`), 409, "code_spent")
	if v := e.do(nil, "POST", "/api/tokens/verify", bindThief, "Authorization", shop); v.body["valid"] != false || v.body["reason"] != "other_holder" {
		t.Errorf("the thief after the owner's hand-off: %s", v.raw)
	}
	// An offline verifier redeems without a holder, and needs no key.
	r = e.do(b, "POST", "/api/rooms/sale/enter", "")
	u, _ = url.Parse(r.body["redirect_url"].(string))
	if got := redeem(`{"code": "` + u.Query().Get("wr_code") + `", "room": "sale"}`); got.status != 200 || got.body["token"] != tok {
		t.Errorf("anonymous redeem: %d %s", got.status, got.raw)
	}
	// The shop key comes from the admin API.
	k := e.do(nil, "GET", "/admin/api/rooms/sale/shop-key", "", "Authorization", "Bearer "+adminToken)
	if k.status != 200 || "Bearer "+k.body["shop_key"].(string) != shop {
		t.Errorf("shop-key: %d %s", k.status, k.raw)
	}
	wantError(t, e.do(nil, "GET", "/admin/api/rooms/sale/shop-key", ""), 401, "unauthorized")
}
