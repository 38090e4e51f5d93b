package pow_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/pow"
)

// cheapDerive stands in for scrypt where only the count of runs matters.
func cheapDerive(runs *atomic.Int64) func(nonce, salt []byte, counter uint32) ([]byte, error) {
	return func(nonce, salt []byte, counter uint32) ([]byte, error) {
		runs.Add(1)
		k := sha256.Sum256(append(append(append([]byte(nil), nonce...), salt...), byte(counter)))
		return k[:], nil
	}
}

// running starts p.Run and stops it (and waits for it) when the test ends.
func running(t *testing.T, p *pow.Pool) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return ctx
}

// step lets the refill take its next run: it waits for the refill to pause
// on the clock, then moves the clock by one interval.
func step(t *testing.T, ctx context.Context, clock *clockwork.FakeClock, every time.Duration) {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := clock.BlockUntilContext(wait, 1); err != nil {
		t.Fatalf("the refill never paused: %v", err)
	}
	clock.Advance(every)
}

// A burst of asks costs at most the pool's size plus the refill's rate of
// scrypt runs, however many ask: the rest are told to come back.
func TestPoolBurstCostsBoundedScrypt(t *testing.T) {
	const size, rate, cost = 8, 10, 200
	every := time.Second / rate
	var runs atomic.Int64
	clock := clockwork.NewFakeClock()
	p := pow.NewPool(pow.PoolOptions{Size: size, Rate: rate, Warm: cost, Clock: clock, Derive: cheapDerive(&runs)})
	ctx := running(t, p)
	for p.Ready(cost) < size {
		step(t, ctx, clock, every)
	}
	if n := runs.Load(); n != size {
		t.Fatalf("%d runs to fill a pool of %d", n, size)
	}

	served, refused := 0, 0
	for range 1000 {
		_, err := p.Take(cost)
		switch {
		case err == nil:
			served++
		case errors.Is(err, pow.ErrNoChallenge):
			refused++
		default:
			t.Fatal(err)
		}
	}
	// The first ask wakes the idle refill, which may shelve one more key
	// before it paces itself.
	if served < size || served > size+1 || served+refused != 1000 {
		t.Fatalf("served %d, refused %d: want the pool's %d (and one more at most)", served, refused, size)
	}
	// A second of asking at the same pace: the refill derives one key an
	// interval, no more, and each goes to one asker.
	for range rate {
		step(t, ctx, clock, every)
		for range 100 {
			if _, err := p.Take(cost); err == nil {
				served++
			}
		}
	}
	if n := runs.Load(); n > size+rate+1 {
		t.Fatalf("%d scrypt runs for a burst over one second: want at most %d", n, size+rate+1)
	}
	if int64(served) > runs.Load() {
		t.Fatalf("served %d challenges from %d keys", served, runs.Load())
	}
}

// Keys go out once, even to many concurrent askers.
func TestPoolHandsOutEachKeyOnce(t *testing.T) {
	const size = 64
	var runs atomic.Int64
	clock := clockwork.NewFakeClock()
	p := pow.NewPool(pow.PoolOptions{Size: size, Rate: 1000, Warm: 20, Clock: clock, Derive: cheapDerive(&runs)})
	ctx := running(t, p)
	for p.Ready(20) < size {
		step(t, ctx, clock, time.Millisecond)
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 * size {
				if k, err := p.Take(20); err == nil {
					mu.Lock()
					seen[string(k.Nonce)]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for nonce, n := range seen {
		if n != 1 {
			t.Fatalf("nonce %x handed out %d times", nonce, n)
		}
		total += n
	}
	if total < size || int64(total) > runs.Load() {
		t.Fatalf("%d keys handed out, %d derived: want each derived key at most once, the full pool at least", total, runs.Load())
	}
}

// An empty pool answers at once, without running scrypt in the call.
func TestPoolEmptyDoesNotDerive(t *testing.T) {
	var runs atomic.Int64
	p := pow.NewPool(pow.PoolOptions{Derive: cheapDerive(&runs)})
	now := t0
	is := issuer(&now).From(p)
	if _, err := is.Issue("sale", "v:abc", 20); !errors.Is(err, pow.ErrNoChallenge) {
		t.Fatalf("issue from an empty pool: %v, want ErrNoChallenge", err)
	}
	if runs.Load() != 0 {
		t.Fatalf("%d scrypt runs in the call", runs.Load())
	}
}

// Only so many costs are kept: the one asked for least recently makes way,
// so rooms with many costs cannot grow the pool without bound.
func TestPoolKeepsBoundedCosts(t *testing.T) {
	var runs atomic.Int64
	clock := clockwork.NewFakeClock()
	p := pow.NewPool(pow.PoolOptions{Size: 2, Rate: 1000, Costs: 2, Clock: clock, Derive: cheapDerive(&runs)})
	ctx := running(t, p)
	for _, c := range []int64{10, 20} {
		_, _ = p.Take(c)
		clock.Advance(time.Millisecond) // orders the asks
	}
	for p.Ready(10) < 2 || p.Ready(20) < 2 {
		step(t, ctx, clock, time.Millisecond)
	}
	_, _ = p.Take(30) // 10 was asked for least recently
	for p.Ready(30) < 2 {
		step(t, ctx, clock, time.Millisecond)
	}
	if p.Ready(10) != 0 || p.Ready(20) != 2 {
		t.Fatalf("ready: cost 10 %d, 20 %d, 30 %d: want 10 dropped", p.Ready(10), p.Ready(20), p.Ready(30))
	}
}

// Challenges made from pooled keys are solved and verified as any other,
// with the real scrypt, and bound to their room and visitor as before.
func TestPoolSolutionsVerify(t *testing.T) {
	clock := clockwork.NewFakeClock()
	p := pow.NewPool(pow.PoolOptions{Size: 2, Rate: 1000, Warm: 20, Clock: clock})
	ctx := running(t, p)
	for p.Ready(20) < 2 {
		step(t, ctx, clock, time.Millisecond)
	}
	now := t0
	is := issuer(&now).From(p)
	a, b := solved(t, is, "sale", "v:alice", 20), solved(t, is, "sale", "v:bob", 20)
	if a.Challenge.Parameters.Nonce == b.Challenge.Parameters.Nonce {
		t.Fatal("two challenges from one key")
	}
	if _, err := is.Verify(a.Encode(), "sale", "v:alice"); err != nil {
		t.Fatalf("verify: %v", err)
	}
	if _, err := is.Verify(a.Encode(), "sale", "v:bob"); !errors.Is(err, pow.ErrWrongVisitor) {
		t.Fatalf("alice's solution for bob: %v", err)
	}
	if _, err := is.Verify(b.Encode(), "other", "v:bob"); !errors.Is(err, pow.ErrWrongRoom) {
		t.Fatalf("another room: %v", err)
	}
}
