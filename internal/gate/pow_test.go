package gate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/queue"
)

// powOn is a room that asks for proof of work, cheaply (at most 4 scrypt runs).
func powOn(s *queue.Settings) {
	s.BotProtection.ProofOfWork = queue.ProofOfWorkOn
	s.BotProtection.PowCost = 4
}

// entered is how many places the room has handed out.
func (f *fixture) entered() int64 {
	f.t.Helper()
	st, err := f.line.Stats(context.Background(), room, f.clock.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return st.EnteredTotal
}

// challengeOf checks that res refuses a place for want of work with code,
// and returns the challenge beside the error.
func challengeOf(t *testing.T, res result, status int, code string) pow.Challenge {
	t.Helper()
	e, _ := res.json["error"].(map[string]any)
	if res.status != status || e["code"] != code || res.json["challenge"] == nil {
		t.Fatalf("%d %s, want %d %s with a challenge", res.status, res.body, status, code)
	}
	if cc := res.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store: a challenge is one client's", cc)
	}
	raw, _ := json.Marshal(res.json["challenge"])
	var ch pow.Challenge
	if err := json.Unmarshal(raw, &ch); err != nil {
		t.Fatal(err)
	}
	return ch
}

func solve(t *testing.T, ch pow.Challenge) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pow.Solve(ctx, ch, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p.Encode()
}

// TestProxyAPIClientPaysTheRoomsProofOfWork: the gate enters API clients
// itself, so with the room's proof of work on it asks them for it as
// waitroom's enter does: a 403 challenge bound to the gate's visitor
// cookie and no place, then a place for the solution in X-Waitroom-Pow.
// Another client's solution, garbage and a spent solution get no place.
func TestProxyAPIClientPaysTheRoomsProofOfWork(t *testing.T) {
	f := newFixture(t, powOn)
	c := browser() // keeps cookies, as an API client must
	res := f.do(c, "POST", "/api/orders", "Accept: application/json")
	ch := challengeOf(t, res, http.StatusForbidden, "challenge_required")
	if cookie(res, "wr_vid") == nil {
		t.Fatal("the challenge came without the visitor cookie it is bound to")
	}
	if res.json["waiting_room_url"] != f.url+"/rooms/"+room {
		t.Errorf("waiting_room_url %v", res.json["waiting_room_url"])
	}
	if n := f.entered(); n != 0 || len(f.up.requests()) != 0 {
		t.Fatalf("without work: %d places, %d upstream calls; want none", n, len(f.up.requests()))
	}
	solution := solve(t, ch)

	// The attackers: the solution from another client, and garbage.
	thief := browser()
	challengeOf(t, f.do(thief, "POST", "/api/orders", "Accept: application/json", "X-Waitroom-Pow: "+solution),
		http.StatusForbidden, "challenge_wrong_visitor")
	challengeOf(t, f.do(thief, "POST", "/api/orders", "Accept: application/json", "X-Waitroom-Pow: bm90IGEgcGF5bG9hZA"),
		http.StatusBadRequest, "challenge_malformed")
	if n := f.entered(); n != 0 {
		t.Fatalf("a stolen or malformed solution took %d places", n)
	}

	// The solver: admitted on the fast track, its turn 500 ms on.
	res = f.do(c, "POST", "/api/orders", "Accept: application/json", "X-Waitroom-Pow: "+solution)
	if res.status != http.StatusTooEarly || res.json["token"] == nil {
		t.Fatalf("with the solution: %d %s, want 425 with its token", res.status, res.body)
	}
	if n := f.entered(); n != 1 {
		t.Fatalf("with the solution: %d places, want 1", n)
	}
	f.clock.Advance(time.Second)
	// Its place is held: no more work to ask again, and the order passes.
	if res := f.do(c, "POST", "/api/orders", "Accept: application/json"); res.status != http.StatusOK {
		t.Fatalf("its turn: %d %s, want the checkout's 200", res.status, res.body)
	}
	f.settle() // the order completed the slot

	// Spent: the same solution buys no second place.
	challengeOf(t, f.do(c, "POST", "/api/orders", "Accept: application/json", "X-Waitroom-Pow: "+solution),
		http.StatusForbidden, "challenge_spent")
	if n := f.entered(); n != 1 {
		t.Fatalf("a spent solution: %d places, want still 1", n)
	}
	if got := len(f.up.requests()); got != 1 {
		t.Errorf("the checkout saw %d orders, want the one paid for", got)
	}
}

// TestForwardAuthAPIClientPaysTheRoomsProofOfWork: forward auth is the same
// gate: the challenge as the visitor's answer (nginx's flavour carries it
// in Waitroom-Body), and the solution in X-Waitroom-Pow, which proxies pass
// on with the visitor's other headers.
func TestForwardAuthAPIClientPaysTheRoomsProofOfWork(t *testing.T) {
	f := newFixture(t, powOn)
	c := browser()
	ask := []string{"X-Forwarded-Uri: /api/orders", "X-Forwarded-Method: POST", "Accept: application/json"}
	res := f.do(c, "POST", forwardAuth+"?refuse=401", ask...)
	if res.status != http.StatusUnauthorized || res.header.Get("Waitroom-Status") != "403" ||
		!strings.Contains(res.header.Get("Waitroom-Body"), `"challenge_required"`) || res.header.Get("Waitroom-Set-Cookie-Visitor") == "" {
		t.Fatalf("refuse=401: %d %v, want 401 carrying the 403 challenge and the visitor cookie", res.status, res.header)
	}
	ch := challengeOf(t, f.do(c, "POST", forwardAuth, ask...), http.StatusForbidden, "challenge_required")
	if n := f.entered(); n != 0 {
		t.Fatalf("without work: %d places, want none", n)
	}
	res = f.do(c, "POST", forwardAuth, append(ask, "X-Waitroom-Pow: "+solve(t, ch))...)
	if res.status != http.StatusTooEarly || res.json["token"] == nil {
		t.Fatalf("with the solution: %d %s, want 425 with its token", res.status, res.body)
	}
	f.clock.Advance(time.Second)
	if res := f.do(c, "POST", forwardAuth, ask...); res.status != http.StatusOK || res.header.Get("Waitroom-Ticket") == "" {
		t.Fatalf("its turn: %d %s, want 200 with the verified ticket", res.status, res.body)
	}
	if n := f.entered(); n != 1 {
		t.Errorf("%d places, want 1", n)
	}
}
