package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// The k-th place from one network costs what queue.PowPrice says, stated in
// the challenge; a solution priced before the network took more places is
// refused (challenge_underpaid) with a challenge at the new price, which
// then buys the place. Every visitor here is one address (127.0.0.1).
func TestPowPriceRisesPerNetwork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const room = `{"paused": true, "bot_protection": {"proof_of_work": "on", "pow_cost": 32}}`
	e.putRoom("sale", room)
	bp := queue.BotProtection{ProofOfWork: queue.ProofOfWorkOn, PowCost: 32}
	n := queue.PowFreePlaces + 6
	visitors := make([]*http.Client, n)
	early := make([]string, n) // solved while the network held nothing: the base price
	for k := range visitors {
		visitors[k] = e.browser()
		c := challengeOf(t, e.do(visitors[k], "GET", "/api/rooms/sale/challenge", ""))
		if p := c.Parameters; p.Difficulty != 32 || p.Base != 32 || p.Held != 0 {
			t.Fatalf("visitor %d's first challenge: difficulty %d base %d held %d", k, p.Difficulty, p.Base, p.Held)
		}
		early[k] = solve(t, c)
	}
	for k := range n {
		r := e.do(visitors[k], "POST", "/api/rooms/sale/enter", powBody(early[k]))
		want := queue.PowPrice(bp, int64(k))
		if want == 32 { // the base price: the first places, and the rise's first steps rounded down
			if r.status != 200 {
				t.Fatalf("place %d at the base price: %d %s", k, r.status, r.raw)
			}
			continue
		}
		wantError(t, r, 403, "challenge_underpaid")
		c := challengeOf(t, r)
		if p := c.Parameters; p.Difficulty != want || p.Held != int64(k) || p.Base != 32 || want <= 32 {
			t.Fatalf("place %d: challenge at difficulty %d held %d, want %d held %d", k, p.Difficulty, p.Held, want, k)
		}
		if r := e.do(visitors[k], "POST", "/api/rooms/sale/enter", powBody(solve(t, c))); r.status != 200 {
			t.Fatalf("place %d at its price: %d %s", k, r.status, r.raw)
		}
	}
	if got := e.entered("sale"); got != float64(n) {
		t.Fatalf("entered %v, want %d", got, n)
	}
	// The next visitor's challenge states the price of place n.
	c := challengeOf(t, e.do(e.browser(), "GET", "/api/rooms/sale/challenge", ""))
	if c.Parameters.Difficulty != queue.PowPrice(bp, int64(n)) || c.Parameters.Held != int64(n) {
		t.Fatalf("after %d places: %+v", n, c.Parameters)
	}
}

// A challenge flood from one network in one room: the flood is limited per
// network (429 once its burst is spent), and an honest visitor of another
// room, from another network, gets each challenge within 1 s throughout.
func TestPowChallengeFloodLeavesOtherRoomsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of a few seconds")
	}
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	prefix := redistest.Prefix(t)
	line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{})
	const burst = 100
	srv := server.New(line, server.Config{AdminToken: adminToken,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Challenges: throttle.New(rdb, "challenge", throttle.Options{Prefix: prefix,
			PerClient: throttle.Limit{N: burst, Per: time.Minute}})})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	e := &env{t: t, srv: srv, url: ts.URL, line: line}
	e.putRoom("flooded", powRoom)
	e.putRoom("quiet", powRoom)

	get := func(c *http.Client, room, from string) (int, time.Duration) {
		req, _ := http.NewRequest("GET", ts.URL+"/api/rooms/"+room+"/challenge", nil)
		req.Header.Set("X-Forwarded-For", from)
		began := time.Now()
		res, err := c.Do(req)
		if err != nil {
			return 0, time.Since(began)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, time.Since(began)
	}
	ctx, stop := context.WithTimeout(context.Background(), 4*time.Second)
	defer stop()
	var wg sync.WaitGroup
	var flood, refused atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{}
			for i := 0; i < 20_000 && ctx.Err() == nil; i++ {
				st, _ := get(c, "flooded", "198.51.100.7")
				flood.Add(1)
				if st == http.StatusTooManyRequests {
					refused.Add(1)
				}
			}
		}()
	}
	honest := &http.Client{}
	var worst time.Duration
	for i := 0; ctx.Err() == nil; i++ {
		st, took := get(honest, "quiet", "203.0.113.9") // one network, under its own burst
		if st != 200 {
			t.Errorf("honest challenge %d: status %d", i, st)
		}
		worst = max(worst, took)
		time.Sleep(50 * time.Millisecond) // a visitor's pace, not a signal
	}
	wg.Wait()
	t.Logf("flood: %d challenges asked, %d refused (429); honest: worst %v", flood.Load(), refused.Load(), worst)
	if worst > time.Second {
		t.Errorf("an honest visitor of another room waited %v for a challenge", worst)
	}
	if flood.Load()-refused.Load() > burst+10 { // the burst, and what refills in 4 s
		t.Errorf("the flood got %d challenges past a burst of %d", flood.Load()-refused.Load(), burst)
	}
}
