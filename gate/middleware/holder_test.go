package middleware_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// A browser admitted on waitroom's waiting page lands on the shop with
// ?wr_token=: the first shop visitor to present the token holds it, and
// copies sent by anyone else (as a Bearer, as the cookie, or landing with
// the same URL) reach no checkout, while the holder passes without asking
// waitroom again.
func TestMiddlewareRefusesACopiedToken(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, func(s *queue.Settings) { s.Capacity = 1 }, nil)
		_, tok := f.admit("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") // waitroom's cookie, which the shop never sees
		f.clock.Advance(time.Second)
		f.pause()

		holder := jarClient()
		land := f.do(holder, "GET", "/checkout/?wr_token="+tok, "Accept: text/html")
		if land.status != http.StatusFound || cookie(land, "wr_vid") == nil {
			t.Fatalf("landing: %d, want 302 with a visitor cookie", land.status)
		}
		if res := f.do(holder, "GET", "/checkout/", "Accept: text/html"); res.status != 200 {
			t.Fatalf("the holder: %d %s", res.status, res.body)
		}
		calls := f.waitroomAPICalls()
		if res := f.do(holder, "GET", "/checkout/again", "Accept: text/html"); res.status != 200 {
			t.Fatalf("the holder again: %d", res.status)
		}
		if n := f.waitroomAPICalls() - calls; n != 0 {
			t.Errorf("the holder's second request asked waitroom %d times, want 0", n)
		}
		seen := len(f.shopSaw())

		copies := map[string][]string{
			"bearer":             {"Accept: application/json", "Authorization: Bearer " + tok},
			"cookie":             {"Accept: application/json", "Cookie: wr_token=" + tok},
			"bearer, own cookie": {"Accept: application/json", "Authorization: Bearer " + tok, "Cookie: wr_vid=ffffffffffffffffffffffffffffffff"},
		}
		for name, hdr := range copies {
			res := f.do(client(nil), "POST", "/api/orders", hdr...)
			if res.status != http.StatusForbidden || !strings.Contains(res.body, `"token_other_holder"`) {
				t.Errorf("%s: %d %s, want 403 token_other_holder", name, res.status, res.body)
			}
		}
		other := jarClient()
		land = f.do(other, "GET", "/checkout/?wr_token="+tok, "Accept: text/html")
		if res := f.do(other, "GET", land.header.Get("Location"), "Accept: text/html"); res.status != http.StatusFound ||
			!strings.HasSuffix(res.header.Get("Location"), "/rooms/"+room) {
			t.Errorf("a second landing: %d to %q, want the waiting page", res.status, res.header.Get("Location"))
		}
		if n := len(f.shopSaw()) - seen; n != 0 {
			t.Errorf("the shop saw %d requests from copies", n)
		}
	})
}

// Offline, a token the middleware itself completed is refused from then on
// (a token completed elsewhere passes until exp unless Online is set).
func TestMiddlewareRefusesATokenItCompleted(t *testing.T) {
	f := newFixture(t, "net/http", nil, nil)
	_, tok := f.admit(vid)
	f.clock.Advance(time.Second)
	res := f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner)
	f.busy.Wait()
	if res.status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.status, res.body)
	}
	if v, _ := f.line.Verify(context.Background(), tok, room); v.Reason != "completed" {
		t.Fatalf("waitroom: %q, want completed", v.Reason)
	}
	f.pause()
	res = f.do(client(nil), "POST", "/api/orders", "Accept: application/json", "Authorization: Bearer "+tok, owner)
	if res.status != http.StatusTooManyRequests || !strings.Contains(res.body, "(completed)") {
		t.Errorf("the completed token again: %d %s, want 429 completed", res.status, res.body)
	}
}

// Issue 22: a thief with a copy of the token (read from a log, a reseller)
// presents it at the shop before its owner and holds it. The owner, refused,
// goes to the waiting page, whose hand-off code (redeemed by the middleware
// with the shop key) gives the token back to the owner and ends the thief's
// hold; the spent code opens nothing for anyone else.
func TestMiddlewareOwnerTakesBackATokenAThiefPresentedFirst(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, func(s *queue.Settings) { s.Capacity = 1 }, nil)
		tk, tok := f.admit("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
		f.clock.Advance(time.Second)
		f.pause()

		thief := jarClient()
		if res := f.do(thief, "GET", "/checkout/", "Accept: text/html", "Authorization: Bearer "+tok); res.status != 200 {
			t.Fatalf("the thief, first: %d %s", res.status, res.body)
		}
		owner := jarClient()
		res := f.do(owner, "GET", "/checkout/", "Accept: text/html", "Authorization: Bearer "+tok)
		if res.status != http.StatusFound || !strings.HasSuffix(res.header.Get("Location"), "/rooms/"+room) {
			t.Fatalf("the owner after the thief: %d to %q, want the waiting page", res.status, res.header.Get("Location"))
		}
		// The waiting page knows its visitor by waitroom's own cookie and
		// sends it back with a fresh code.
		s, _ := f.line.Settings(context.Background(), room)
		v, err := f.line.View(tk, &s)
		if err != nil || v.RedirectURL == nil {
			t.Fatalf("view: %v", err)
		}
		u, _ := url.Parse(*v.RedirectURL)
		code := u.Query().Get("wr_code")
		if code == "" || u.Query().Has("wr_token") {
			t.Fatalf("redirect_url %q: want a code and no token", *v.RedirectURL)
		}
		land := f.do(owner, "GET", "/checkout/?wr_code="+code, "Accept: text/html")
		if land.status != http.StatusFound || cookie(land, "wr_token") == nil || cookie(land, "wr_token").Value != tok {
			t.Fatalf("the owner's landing: %d, want 302 with the token as a cookie", land.status)
		}
		if res := f.do(owner, "GET", "/checkout/", "Accept: text/html"); res.status != 200 {
			t.Fatalf("the owner after the hand-off: %d %s", res.status, res.body)
		}
		if res := f.do(thief, "GET", "/checkout/", "Accept: application/json", "Authorization: Bearer "+tok); res.status != http.StatusForbidden {
			t.Errorf("the thief after the hand-off: %d %s, want 403", res.status, res.body)
		}
		other := jarClient()
		if land := f.do(other, "GET", "/checkout/?wr_code="+code, "Accept: text/html"); cookie(land, "wr_token") != nil {
			t.Error("a spent code set a token")
		}
	})
}
