package gate_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestProxySolutionsCountAgainstTheChallengeLimit: checking a solution sent
// in X-Waitroom-Pow runs scrypt, so the gate counts each against the
// client network's challenge limit (--challenges-per-ip), as waitroom's
// enter and GET …/challenge do: over it, 429 with Retry-After and nothing
// checked. Another network is not held back by the first one's count.
func TestProxySolutionsCountAgainstTheChallengeLimit(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	limit := throttle.New(rdb, "challenge", throttle.Options{Prefix: redistest.Prefix(t),
		PerClient: throttle.Limit{N: 3, Per: time.Minute}})
	f := newFixtureProxy(t, rdb, powOn, func(pc *gate.ProxyConfig) {
		pc.Challenges = limit
		pc.ClientIP = func(r *http.Request) string { return r.Header.Get("X-Test-Client") }
	})
	garbage := "X-Waitroom-Pow: bm90IGEgcGF5bG9hZA"
	attacker := browser()
	for range 3 {
		challengeOf(t, f.do(attacker, "POST", "/api/orders", "Accept: application/json", "X-Test-Client: 198.51.100.7", garbage),
			http.StatusBadRequest, "challenge_malformed")
	}
	res := f.do(attacker, "POST", "/api/orders", "Accept: application/json", "X-Test-Client: 198.51.100.7", garbage)
	e, _ := res.json["error"].(map[string]any)
	if res.status != http.StatusTooManyRequests || e["code"] != "rate_limited" || res.header.Get("Retry-After") == "" {
		t.Fatalf("the 4th solution in a minute: %d %s (Retry-After %q), want 429 rate_limited", res.status, res.body, res.header.Get("Retry-After"))
	}
	// Asking without a solution costs nothing to check: still a challenge.
	challengeOf(t, f.do(attacker, "POST", "/api/orders", "Accept: application/json", "X-Test-Client: 198.51.100.7"),
		http.StatusForbidden, "challenge_required")
	// Another network, and a real solution there, are unaffected.
	honest := browser()
	ch := challengeOf(t, f.do(honest, "POST", "/api/orders", "Accept: application/json", "X-Test-Client: 203.0.113.9"),
		http.StatusForbidden, "challenge_required")
	res = f.do(honest, "POST", "/api/orders", "Accept: application/json", "X-Test-Client: 203.0.113.9", "X-Waitroom-Pow: "+solve(t, ch))
	if res.status != http.StatusTooEarly || res.json["token"] == nil {
		t.Fatalf("another network's solution: %d %s, want 425 with its token", res.status, res.body)
	}
}
