package middleware_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/queue"
)

// TestMiddlewarePassesTheProofOfWorkThrough: the middleware enters API
// clients through waitroom's enter, so with the room's proof of work on the
// client gets waitroom's 403 challenge (bound to the middleware's visitor
// cookie) and no place; the solution it sends in X-Waitroom-Pow goes on to
// waitroom and buys its place. Another client's copy of it buys nothing.
func TestMiddlewarePassesTheProofOfWorkThrough(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, func(s *queue.Settings) {
			s.BotProtection.ProofOfWork = queue.ProofOfWorkOn
			s.BotProtection.PowCost = 4 // at most 4 scrypt runs
		}, nil)
		entered := func() int64 {
			t.Helper()
			st, err := f.line.Stats(context.Background(), room, f.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			return st.EnteredTotal
		}
		c := jarClient()
		res := f.do(c, "POST", "/api/orders", "Accept: application/json")
		e, _ := res.json["error"].(map[string]any)
		if res.status != http.StatusForbidden || e["code"] != "challenge_required" || res.json["challenge"] == nil ||
			res.header.Get("Cache-Control") != "no-store" || cookie(res, "wr_vid") == nil {
			t.Fatalf("without work: %d %s, want 403 challenge_required with a challenge and the visitor cookie", res.status, res.body)
		}
		if n := entered(); n != 0 {
			t.Fatalf("without work: %d places, want none", n)
		}
		raw, _ := json.Marshal(res.json["challenge"])
		var ch pow.Challenge
		if err := json.Unmarshal(raw, &ch); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := pow.Solve(ctx, ch, 1)
		if err != nil {
			t.Fatal(err)
		}
		solution := "X-Waitroom-Pow: " + p.Encode()

		thief := f.do(jarClient(), "POST", "/api/orders", "Accept: application/json", solution)
		if e, _ := thief.json["error"].(map[string]any); thief.status != http.StatusForbidden ||
			e["code"] != "challenge_wrong_visitor" || e["field"] != "pow" || thief.json["challenge"] == nil {
			t.Fatalf("another client with the solution: %d %s, want 403 challenge_wrong_visitor", thief.status, thief.body)
		}

		res = f.do(c, "POST", "/api/orders", "Accept: application/json", solution)
		if res.status != http.StatusTooEarly || res.json["token"] == nil {
			t.Fatalf("with the solution: %d %s, want 425 with its token", res.status, res.body)
		}
		if n := entered(); n != 1 {
			t.Fatalf("%d places, want the one paid for", n)
		}
		f.clock.Advance(time.Second)
		if res := f.do(c, "POST", "/api/orders", "Accept: application/json"); res.status != http.StatusCreated {
			t.Fatalf("its turn: %d %s, want the shop's 201", res.status, res.body)
		}
		if n := len(f.shopSaw()); n != 1 {
			t.Errorf("the shop saw %d orders, want 1", n)
		}
	})
}

// TestMiddlewarePassesPerClientLimitsThrough: waitroom's 429 over a
// per-client limit reaches the client as such, with Retry-After, rather
// than as waitroom being unreachable. (Every client of the middleware
// comes from the shop's address, so a shop keeps these limits off or high.)
func TestMiddlewarePassesPerClientLimitsThrough(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, func(s *queue.Settings) {
			s.Paused = true
			s.BotProtection.PlacesPerIP = 1
		}, nil)
		if res := f.do(jarClient(), "POST", "/api/orders", "Accept: application/json"); res.status != http.StatusTooManyRequests || res.json["ticket"] == nil {
			t.Fatalf("first client: %d %s, want 429 in line with a ticket", res.status, res.body)
		}
		res := f.do(jarClient(), "POST", "/api/orders", "Accept: application/json")
		e, _ := res.json["error"].(map[string]any)
		if res.status != http.StatusTooManyRequests || e["code"] != "too_many_places" || res.header.Get("Retry-After") == "" || res.json["ticket"] != "" {
			t.Fatalf("second client over places_per_ip: %d %s, want 429 too_many_places with Retry-After and no ticket", res.status, res.body)
		}
	})
}
