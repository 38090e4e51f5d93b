package gate_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// The attack of issue 9: at a gate of capacity 1, the admitted visitor's
// token is copied to other clients. Each copy, sent as a Bearer, as the
// token cookie or through the landing's ?wr_token=, reaches no checkout and
// earns no place (issue 22: 403 token_other_holder); the owner still
// passes, and the next visitor keeps its place.
func TestProxyRefusesACopiedToken(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) { s.Capacity = 1 })
	tk, tok := f.admit(vid)
	f.clock.Advance(time.Second)
	next := browser()
	if res := f.do(next, "POST", "/api/orders", "Accept: application/json"); res.status != http.StatusTooManyRequests || res.json["position"] != 1.0 {
		t.Fatalf("the next visitor: %d %s, want 429 at position 1", res.status, res.body)
	}

	copies := map[string][]string{
		"bearer":             {"Accept: application/json", "Authorization: Bearer " + tok},
		"cookie":             {"Accept: application/json", "Cookie: wr_token=" + tok},
		"bearer, own cookie": {"Accept: application/json", "Authorization: Bearer " + tok, "Cookie: wr_vid=ffffffffffffffffffffffffffffffff"},
		"browser cookie":     {"Accept: text/html", "Cookie: wr_token=" + tok},
	}
	for name, hdr := range copies {
		t.Run(name, func(t *testing.T) {
			res := f.do(client(nil), "POST", "/api/orders", hdr...)
			if res.status == http.StatusOK {
				t.Fatalf("a copied token reached checkout")
			}
			if strings.Contains(hdr[0], "json") {
				if res.status != http.StatusForbidden || res.json["error"].(map[string]any)["code"] != "token_other_holder" ||
					res.json["ticket"] != nil {
					t.Errorf("status %d %s, want 403 token_other_holder and no place", res.status, res.body)
				}
			} else if res.status != http.StatusFound || res.header.Get("Location") != f.url+"/rooms/"+room {
				t.Errorf("browser: %d to %q, want the waiting page", res.status, res.header.Get("Location"))
			}
		})
	}
	t.Run("landing", func(t *testing.T) {
		jar, _ := cookiejar.New(nil)
		c := client(jar)
		res := f.do(c, "GET", "/checkout/?wr_token="+tok, "Accept: text/html")
		if res.status != http.StatusFound {
			t.Fatalf("landing: %d", res.status)
		}
		res = f.do(c, "GET", res.header.Get("Location"), "Accept: text/html")
		if res.status != http.StatusFound || res.header.Get("Location") != f.url+"/rooms/"+room {
			t.Errorf("after landing: %d to %q, want the waiting page", res.status, res.header.Get("Location"))
		}
	})
	if n := len(f.up.requests()); n != 0 {
		t.Fatalf("the upstream saw %d requests from copies", n)
	}

	res := f.do(client(nil), "GET", "/checkout/", "Authorization: Bearer "+tok, owner)
	if res.status != http.StatusOK || f.up.last(t).Header.Get("Waitroom-Ticket") != tk.ID {
		t.Fatalf("the owner: %d %s", res.status, res.body)
	}
	if res := f.do(next, "POST", "/api/orders", "Accept: application/json"); res.json["position"] != 1.0 {
		t.Errorf("the next visitor: %s, want still at position 1", res.body)
	}
}

// A user's token (entered with a user token) carries the user's sub, which
// no cookie at the gate can match: presenting it binds nothing (a thief
// with a copy, first or not, is refused); the owner's hand-off code from the
// waiting page binds it to the owner's browser, and a spent code opens
// nothing for anyone else.
func TestProxyHoldsAUsersTokenForWhoRedeemedItsCode(t *testing.T) {
	f := newFixture(t, nil)
	tk, _, err := f.line.Enter(context.Background(), room, "u:alice")
	if err != nil || tk.State != vocab.StateAdmitted {
		t.Fatalf("enter: %v %s", err, tk.State)
	}
	tok, err := f.line.Token(tk)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	f.pause(true) // so that nobody refused takes a new place
	thief := browser()
	for i := range 2 {
		res := f.do(thief, "GET", "/checkout/", "Accept: application/json", "Authorization: Bearer "+tok)
		if res.status != http.StatusForbidden || !strings.Contains(res.body, `"token_other_holder"`) {
			t.Fatalf("the thief, first, request %d: %d %s, want 403 token_other_holder", i, res.status, res.body)
		}
	}
	// The owner's waiting page (it knows them by their user token) hands out
	// a code; landing with it binds the token to the owner's browser.
	owner := browser()
	s, _ := f.line.Settings(context.Background(), room)
	v, err := f.line.View(tk, &s)
	if err != nil || v.RedirectURL == nil || !strings.Contains(*v.RedirectURL, "wr_code=h.") || strings.Contains(*v.RedirectURL, "wr_token") {
		t.Fatalf("the owner's view: %+v %v", v.RedirectURL, err)
	}
	land := f.do(owner, "GET", *v.RedirectURL, "Accept: text/html")
	if land.status != http.StatusFound || land.header.Get("Location") != "/checkout/" {
		t.Fatalf("landing with the code: %d to %q", land.status, land.header.Get("Location"))
	}
	u, _ := url.Parse(f.url)
	if owner.Jar.Cookies(u) == nil {
		t.Error("the owner got no visitor cookie to hold the token by")
	}
	for i := range 2 {
		if res := f.do(owner, "GET", "/checkout/", "Accept: text/html"); res.status != http.StatusOK {
			t.Fatalf("the owner after the hand-off, request %d: %d %s", i, res.status, res.body)
		}
	}
	if res := f.do(thief, "GET", "/checkout/", "Accept: application/json", "Authorization: Bearer "+tok); res.status != http.StatusForbidden {
		t.Errorf("the thief after the hand-off: %d %s, want 403", res.status, res.body)
	}
	again := browser()
	f.do(again, "GET", *v.RedirectURL, "Accept: text/html")
	if res := f.do(again, "GET", "/checkout/", "Accept: text/html"); res.status != http.StatusFound {
		t.Errorf("a spent code's landing: %d, want the waiting page", res.status)
	}
}

// An API client the gate enters for itself takes a place like any other:
// the room's per-client limits hold at the gate too.
func TestProxyHoldsAPIClientsToTheRoomsLimits(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) {
		s.Paused = true
		s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
		s.BotProtection.PlacesPerIP = 2
	})
	for i := range 2 {
		if res := f.do(client(nil), "POST", "/api/orders", "Accept: application/json"); res.status != http.StatusTooManyRequests || res.json["state"] != "waiting" {
			t.Fatalf("client %d: %d %s, want a place in line", i, res.status, res.body)
		}
	}
	res := f.do(client(nil), "POST", "/api/orders", "Accept: application/json")
	if res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") == "" ||
		res.json["error"].(map[string]any)["code"] != "too_many_places" {
		t.Fatalf("third client: %d %s, want 429 too_many_places", res.status, res.body)
	}
}
