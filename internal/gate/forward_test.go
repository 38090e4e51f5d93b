package gate_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

const forwardAuth = "/api/rooms/" + room + "/forward-auth"

// TestForwardAuthAnswersAsTheGate: Traefik and Envoy pass the answer on as
// it is, so it is the reverse-proxy gate's: 302 for browsers, 429 in line
// for API clients, 425 before the turn, 200 with the verified headers.
func TestForwardAuthAnswersAsTheGate(t *testing.T) {
	f := newFixture(t, nil)
	tk, tok := f.admit(vid)
	res := f.do(client(nil), "GET", forwardAuth, "X-Forwarded-Uri: /checkout/", "Accept: application/json", "Authorization: Bearer "+tok, owner)
	if res.status != http.StatusTooEarly || res.header.Get("Retry-After") == "" {
		t.Fatalf("before the turn: %d %s, want 425", res.status, res.body)
	}
	f.clock.Advance(time.Second)
	// Envoy ext_authz puts the visitor's path after the prefix.
	res = f.do(client(nil), "GET", forwardAuth+"/checkout/pay", "Accept: application/json", "Authorization: Bearer "+tok,
		owner, "Waitroom-Ticket: forged")
	if res.status != http.StatusOK || res.header.Get("Waitroom-Ticket") != tk.ID || res.header.Get("Waitroom-Subject") == "" {
		t.Fatalf("valid token: %d %v, want 200 with the verified ticket %s", res.status, res.header, tk.ID)
	}

	c := browser()
	res = f.do(c, "GET", forwardAuth, "X-Forwarded-Uri: /checkout/cart", "X-Forwarded-Method: GET", "Accept: text/html")
	if res.status != http.StatusFound || res.header.Get("Location") != f.url+"/rooms/"+room || res.header.Get("Waitroom-Status") != "302" {
		t.Fatalf("browser: %d to %q, want 302 to the waiting page", res.status, res.header.Get("Location"))
	}
	if cookie(res, "wr_return") == nil || res.header.Get("Waitroom-Set-Cookie-Return") == "" {
		t.Errorf("browser: the return path is not kept: %v", res.header)
	}

	f.pause(true)
	api := browser()
	res = f.do(api, "POST", forwardAuth, "X-Forwarded-Uri: /api/orders", "X-Forwarded-Method: POST", "Accept: application/json")
	if res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") == "" || res.json["ticket"] == nil {
		t.Fatalf("API client: %d %s, want 429 in line with Retry-After", res.status, res.body)
	}
	if e, _ := res.json["error"].(map[string]any); e["code"] != "in_line" {
		t.Errorf("API client: error %v, want in_line", res.json["error"])
	}
	// nginx's flavour: 401, with the real answer in headers.
	res = f.do(api, "POST", forwardAuth+"?refuse=401", "X-Forwarded-Uri: /api/orders", "X-Forwarded-Method: POST", "Accept: application/json")
	if res.status != http.StatusUnauthorized || res.header.Get("Waitroom-Status") != "429" ||
		!strings.Contains(res.header.Get("Waitroom-Body"), `"in_line"`) || res.header.Get("Retry-After") == "" {
		t.Fatalf("refuse=401: %d %v, want 401 carrying the 429", res.status, res.header)
	}

}

func TestForwardAuthRefusesBadQuestions(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct {
		path, hdr string
		status    int
	}{
		{"/api/rooms/nosuch/forward-auth", "X-Forwarded-Uri: /", http.StatusNotFound},
		{"/api/rooms/NOT_A_ROOM/forward-auth", "X-Forwarded-Uri: /", http.StatusNotFound},
		{forwardAuth + "?refuse=302", "X-Forwarded-Uri: /", http.StatusBadRequest},
		{forwardAuth, "X-Forwarded-Uri: http://evil.example/", http.StatusBadRequest},
		{forwardAuth, "X-Forwarded-Method: GET /x", http.StatusBadRequest},
	} {
		res := f.do(client(nil), "GET", c.path, c.hdr, "Accept: application/json")
		if res.status != c.status || res.json["error"] == nil {
			t.Errorf("%s %s: %d %s, want %d with an error body", c.path, c.hdr, res.status, res.body, c.status)
		}
	}
}

// TestForwardAuthHoldsClientsToTheRoomsLimits: forward auth enters API
// clients itself, so the room's per-client limits count them as waitroom's
// enter does (all the tests' clients are 127.0.0.1).
func TestForwardAuthHoldsClientsToTheRoomsLimits(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) {
		s.Paused = true
		s.BotProtection.PlacesPerIP = 1
	})
	ask := []string{"X-Forwarded-Uri: /api/orders", "X-Forwarded-Method: POST", "Accept: application/json"}
	if res := f.do(browser(), "POST", forwardAuth, ask...); res.status != http.StatusTooManyRequests || res.json["ticket"] == nil {
		t.Fatalf("first client: %d %s, want 429 in line with a ticket", res.status, res.body)
	}
	res := f.do(browser(), "POST", forwardAuth, ask...)
	if e, _ := res.json["error"].(map[string]any); res.status != http.StatusTooManyRequests || e["code"] != "too_many_places" || res.json["ticket"] != "" {
		t.Fatalf("second client from the same address: %d %s, want 429 too_many_places and no ticket", res.status, res.body)
	}
}
