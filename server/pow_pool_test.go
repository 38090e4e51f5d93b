package server_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/pow"
	"github.com/waitroom/waitroom/internal/redisstore"
	"github.com/waitroom/waitroom/internal/redistest"
	"github.com/waitroom/waitroom/internal/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// newPoolEnv is newEnv with the server's own challenge pool, as production
// runs it, instead of challenges derived in the request.
func newPoolEnv(t *testing.T, cfg server.Config) *env {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(t0)
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys, queue.LineOptions{Clock: clock})
	cfg.AdminToken = adminToken
	srv := server.New(line, cfg)
	ts := httptest.NewServer(checkedByOpenAPI(t, srv))
	t.Cleanup(ts.Close)
	return &env{t: t, srv: srv, url: ts.URL, line: line, clock: clock}
}

// countedScrypt is the real derivation, counted.
func countedScrypt(runs *atomic.Int64) func(nonce, salt []byte, counter uint32) ([]byte, error) {
	return func(nonce, salt []byte, counter uint32) ([]byte, error) {
		runs.Add(1)
		return pow.DeriveKey(nonce, salt, counter)
	}
}

// fill runs the pool's refill (as the caller that set Config.PowKeys must)
// and lets it shelve keys until cost has want ready.
func fill(t *testing.T, p *pow.Pool, clock *clockwork.FakeClock, cost int64, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for p.Ready(cost) < want {
		wait, stop := context.WithTimeout(ctx, 10*time.Second)
		err := clock.BlockUntilContext(wait, 1)
		stop()
		if err != nil {
			t.Fatalf("the refill never paused: %v", err)
		}
		clock.Advance(time.Second)
	}
}

func wantNoChallenge(t *testing.T, r resp) {
	t.Helper()
	wantError(t, r, 503, "unavailable")
	if r.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q, want 1", r.header.Get("Retry-After"))
	}
}

// An empty pool answers at once: 503, Retry-After: 1, the JSON error; no
// scrypt in the request, and no place.
func TestPowEmptyPoolAnswersUnavailable(t *testing.T) {
	var runs atomic.Int64
	p := pow.NewPool(pow.PoolOptions{Derive: countedScrypt(&runs)}) // nobody refills it
	e := newPoolEnv(t, server.Config{PowKeys: p})
	e.putRoom("sale", powRoom)
	wantNoChallenge(t, e.do(e.browser(), "GET", "/api/rooms/sale/challenge", ""))
	wantNoChallenge(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""))
	wantNoChallenge(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", powBody("junk")))
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d scrypt runs in requests", n)
	}
	if n := e.entered("sale"); n != 0 {
		t.Fatalf("entered_total %v", n)
	}
}

// A burst of challenge requests from many clients costs the server the
// pool it had and the refill's rate of scrypt runs; each challenge served
// is distinct, and a solution to one takes a place.
func TestPowBurstCostsThePoolNotScryptPerRequest(t *testing.T) {
	const size, burst = 4, 40
	var runs atomic.Int64
	clock := clockwork.NewFakeClock()
	p := pow.NewPool(pow.PoolOptions{Size: size, Rate: 1, Warm: 20, Clock: clock, Derive: countedScrypt(&runs)})
	e := newPoolEnv(t, server.Config{PowKeys: p})
	e.putRoom("sale", powRoom)
	fill(t, p, clock, 20, size)

	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got []resp
	)
	for range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do(e.browser(), "GET", "/api/rooms/sale/challenge", "")
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		}()
	}
	wg.Wait()
	served := map[string]pow.Challenge{}
	for _, r := range got {
		if r.status == 200 {
			c := challengeOf(t, r)
			if _, dup := served[c.Parameters.Nonce]; dup {
				t.Fatalf("nonce %s served twice", c.Parameters.Nonce)
			}
			served[c.Parameters.Nonce] = c
			continue
		}
		wantNoChallenge(t, r)
	}
	// The idle refill may shelve one more key when the burst wakes it; the
	// clock does not move, so no more than that.
	if len(served) < size || len(served) > size+1 || runs.Load() > size+1 {
		t.Fatalf("%d of %d served, %d scrypt runs: want the pool's %d (+1)", len(served), burst, runs.Load(), size)
	}

	// A pooled challenge, solved, takes a place.
	alice := e.browser()
	fill(t, p, clock, 20, 1)
	c := challengeOf(t, e.do(alice, "GET", "/api/rooms/sale/challenge", ""))
	if in := e.do(alice, "POST", "/api/rooms/sale/enter", powBody(solve(t, c))); in.status != 200 {
		t.Fatalf("enter with a pooled challenge solved: %d %s", in.status, in.raw)
	}
}

// Without Config.PowKeys the server keeps its own pool, refilled by Run
// and stopped with it.
func TestPowServerRunRefillsItsPool(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := newPoolEnv(t, server.Config{PowPool: pow.PoolOptions{Size: 2, Rate: 10, Clock: clock}})
	e.putRoom("sale", powRoom)
	wantNoChallenge(t, e.do(e.browser(), "GET", "/api/rooms/sale/challenge", "")) // not running yet

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Run(ctx) }()
	for {
		wait, stop := context.WithTimeout(ctx, 10*time.Second)
		err := clock.BlockUntilContext(wait, 1)
		stop()
		if err != nil {
			t.Fatalf("the refill never paused: %v", err)
		}
		if r := e.do(e.browser(), "GET", "/api/rooms/sale/challenge", ""); r.status == 200 {
			break
		}
		clock.Advance(time.Second)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}
