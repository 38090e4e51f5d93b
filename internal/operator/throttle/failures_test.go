package throttle_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

var ctx = context.Background()

// failUntilRefused counts wrong tokens of client until one is refused
// and returns how many were answered as wrong (401) before.
func failUntilRefused(t *testing.T, f *throttle.Failures, client string) int {
	t.Helper()
	for n := 0; n < 1000; n++ {
		if wait, ok := f.Failed(ctx, client); !ok {
			if wait <= 0 || wait > time.Minute {
				t.Fatalf("refused with a wait of %v", wait)
			}
			return n
		}
	}
	t.Fatal("never refused")
	return 0
}

func limits(perClient int) throttle.Options {
	return throttle.Options{PerClient: throttle.Limit{N: perClient, Per: time.Minute}}
}

// TestFailuresAreCountedAcrossServers: two servers on one Redis share the
// count per client; other clients are untouched however many fail, since
// there is no overall count to run out.
func TestFailuresAreCountedAcrossServers(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	o := limits(3)
	o.Prefix = redistest.Prefix(t)
	a, b := throttle.New(rdb, "admin", o), throttle.New(rdb, "admin", o)
	a.Failed(ctx, "192.0.2.1")
	a.Failed(ctx, "192.0.2.1")
	if _, ok := b.Failed(ctx, "192.0.2.1"); !ok {
		t.Fatal("3rd of 3 refused")
	}
	for name, f := range map[string]*throttle.Failures{"a": a, "b": b} {
		if wait, ok := f.Failed(ctx, "192.0.2.1"); ok || wait <= 0 || wait > 21*time.Second {
			t.Fatalf("server %s after 3 failures: let through %v, wait %v, want refused for about 20 s (one failure forgotten)", name, ok, wait)
		}
	}
	// 100 clients each used up: a fresh one still has its whole allowance.
	for i := 0; i < 100; i++ {
		failUntilRefused(t, a, fmt.Sprintf("198.51.%d.1", i))
	}
	if got := failUntilRefused(t, b, "203.0.113.7"); got != 3 {
		t.Fatalf("fresh client after 100 others were locked out: %d failures before refused, want 3", got)
	}
}

// TestConcurrentGuessesCannotSlipPast: 200 wrong tokens at once from one
// client get exactly the allowance of 401s.
func TestConcurrentGuessesCannotSlipPast(t *testing.T) {
	o := limits(5)
	o.Prefix = redistest.Prefix(t)
	// A connection for every guess: on a loaded machine, calls queued for
	// go-redis's default pool (10 per core) waited past the throttle's
	// Redis timeout and were counted on this server alone, before Redis's
	// answers to the others reached it (9 tried in a busy CI run). What is
	// tested is Redis's count of concurrent guesses.
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Shared(t).Addr(), PoolSize: 200})
	t.Cleanup(func() { _ = rdb.Close() })
	f := throttle.New(rdb, "admin", o)
	var wg sync.WaitGroup
	var mu sync.Mutex
	tried := 0
	for i := 0; i < 200; i++ {
		wg.Go(func() {
			if _, ok := f.Failed(ctx, "192.0.2.9"); ok {
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
	o := limits(2)
	o.LocalKeys, o.Now = 4, func() time.Time { return now }
	f := throttle.New(dead, "admin", o)
	if got := failUntilRefused(t, f, "192.0.2.1"); got != 2 {
		t.Fatalf("with Redis down: %d failures before refused, want 2", got)
	}
	// 3 more clients fill the table...
	for i := 2; i <= 4; i++ {
		f.Failed(ctx, fmt.Sprintf("192.0.2.%d", i))
	}
	// ...so new clients share one bucket: 2 failures among them all.
	f.Failed(ctx, "198.51.100.1")
	f.Failed(ctx, "198.51.100.2")
	if _, ok := f.Failed(ctx, "198.51.100.3"); ok {
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
	o := limits(3)
	o.Prefix = redistest.Prefix(t)
	f := throttle.New(rdb, "admin", o)
	f.Failed(ctx, "192.0.2.1")
	f.Failed(ctx, "192.0.2.1")
	for i := 0; i < 3; i++ {
		f.Failed(ctx, "192.0.2.2")
	}
	rs.Kill()
	start := time.Now()
	if _, ok := f.Failed(ctx, "192.0.2.2"); ok {
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
