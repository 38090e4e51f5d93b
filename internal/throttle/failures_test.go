package throttle_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisstore"
	"github.com/waitroom/waitroom/internal/redistest"
	"github.com/waitroom/waitroom/internal/throttle"
)

var ctx = context.Background()

// failUntilRefused makes failed attempts as client until one is refused
// and returns how many were let through.
func failUntilRefused(t *testing.T, f *throttle.Failures, client string) int {
	t.Helper()
	for n := 0; n < 1000; n++ {
		if wait, ok := f.Attempt(ctx, client); !ok {
			if wait <= 0 || wait > time.Minute {
				t.Fatalf("refused with a wait of %v", wait)
			}
			return n
		}
	}
	t.Fatal("never refused")
	return 0
}

func limits(perClient, overall int) throttle.Options {
	return throttle.Options{PerClient: throttle.Limit{N: perClient, Per: time.Minute}, Overall: throttle.Limit{N: overall, Per: time.Minute}}
}

// TestFailuresAreCountedAcrossServers: two servers on one Redis share the
// count per client and overall; right tokens are never counted; other
// clients are untouched until the overall count runs out.
func TestFailuresAreCountedAcrossServers(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	o := limits(3, 7)
	o.Prefix = redistest.Prefix(t)
	a, b := throttle.New(rdb, "admin", o), throttle.New(rdb, "admin", o)
	for i := 0; i < 50; i++ {
		if _, ok := a.Attempt(ctx, "198.51.100.7"); !ok {
			t.Fatalf("right token %d refused", i+1)
		}
		a.Succeeded(ctx, "198.51.100.7")
	}
	a.Attempt(ctx, "192.0.2.1")
	a.Attempt(ctx, "192.0.2.1")
	if _, ok := b.Attempt(ctx, "192.0.2.1"); !ok {
		t.Fatal("3rd of 3 refused")
	}
	for name, f := range map[string]*throttle.Failures{"a": a, "b": b} {
		if wait, ok := f.Attempt(ctx, "192.0.2.1"); ok || wait <= 0 || wait > 21*time.Second {
			t.Fatalf("server %s after 3 failures: let through %v, wait %v, want refused for about 20 s (one failure forgotten)", name, ok, wait)
		}
	}
	// The right token, from a client not blocked, still gets in; and was never counted.
	if got := failUntilRefused(t, b, "198.51.100.7"); got != 3 {
		t.Fatalf("client whose 50 right tokens were taken back: %d failures before refused, want 3", got)
	}
	// Overall: 6 of 7 used; one more from anyone, then everyone waits.
	if _, ok := a.Attempt(ctx, "192.0.2.3"); !ok {
		t.Fatal("7th failure overall refused")
	}
	if _, ok := b.Attempt(ctx, "192.0.2.4"); ok {
		t.Fatal("overall count ran out, a fresh client was let through")
	}
}

// TestConcurrentGuessesCannotSlipPast: attempts are counted before the
// token is looked at, so 200 guesses at once from one client get exactly
// the allowance.
func TestConcurrentGuessesCannotSlipPast(t *testing.T) {
	o := limits(5, 1000)
	o.Prefix = redistest.Prefix(t)
	f := throttle.New(redistest.Shared(t).Client(t), "admin", o)
	var wg sync.WaitGroup
	var mu sync.Mutex
	tried := 0
	for i := 0; i < 200; i++ {
		wg.Go(func() {
			if _, ok := f.Attempt(ctx, "192.0.2.9"); ok {
				mu.Lock()
				tried++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if tried != 5 {
		t.Fatalf("%d of 200 concurrent guesses tried, want 5", tried)
	}
}

// TestFailuresFallBackToABoundedLocalCount: without Redis each server
// counts on its own, in a table that never holds more than LocalKeys
// clients (the rest count together).
func TestFailuresFallBackToABoundedLocalCount(t *testing.T) {
	dead := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:1"}}))
	t.Cleanup(func() { _ = dead.Close() })
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	o := limits(2, 1_000_000)
	o.LocalKeys, o.Now = 4, func() time.Time { return now }
	f := throttle.New(dead, "admin", o)
	if got := failUntilRefused(t, f, "192.0.2.1"); got != 2 {
		t.Fatalf("with Redis down: %d failures before refused, want 2", got)
	}
	// 3 more clients fill the table (the overall key is the fifth)...
	for i := 2; i <= 4; i++ {
		f.Attempt(ctx, fmt.Sprintf("192.0.2.%d", i))
	}
	// ...so new clients share one bucket: 2 failures among them all.
	f.Attempt(ctx, "198.51.100.1")
	f.Attempt(ctx, "198.51.100.2")
	if _, ok := f.Attempt(ctx, "198.51.100.3"); ok {
		t.Fatal("clients beyond the table are not counted")
	}
	// Time forgets: after a minute the table has room again.
	now = now.Add(time.Minute)
	if got := failUntilRefused(t, f, "203.0.113.9"); got != 2 {
		t.Fatalf("new client after the table emptied: %d failures before refused, want 2", got)
	}
}

// TestCountsOutliveARedisOutage: what Redis counted, each server keeps a
// copy of, so a client with failures on record does not start afresh when
// Redis goes away, and a blocked client is answered without asking Redis.
func TestCountsOutliveARedisOutage(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	o := limits(3, 1000)
	o.Prefix = redistest.Prefix(t)
	f := throttle.New(rdb, "admin", o)
	f.Attempt(ctx, "192.0.2.1")
	f.Attempt(ctx, "192.0.2.1")
	for i := 0; i < 3; i++ {
		f.Attempt(ctx, "192.0.2.2")
	}
	rs.Kill()
	start := time.Now()
	if _, ok := f.Attempt(ctx, "192.0.2.2"); ok {
		t.Fatal("blocked client let through once Redis went away")
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("a blocked client's answer waited %v on a dead Redis", d)
	}
	if got := failUntilRefused(t, f, "192.0.2.1"); got != 1 {
		t.Fatalf("client with 2 of 3 failures on record: %d more before refused with Redis down, want 1", got)
	}
}

func TestRetryAfterIsWholeSecondsAtLeastOne(t *testing.T) {
	for wait, want := range map[time.Duration]string{time.Millisecond: "1", time.Second: "1", 1001 * time.Millisecond: "2", 0: "1"} {
		if got := throttle.RetryAfter(wait); got != want {
			t.Errorf("RetryAfter(%v) = %s, want %s", wait, got, want)
		}
	}
}
