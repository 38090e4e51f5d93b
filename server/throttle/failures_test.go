package throttle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/redistest"
	"github.com/waitroom/waitroom/server/throttle"
)

var ctx = context.Background()

// failUntilBlocked records failures of client until it is blocked and
// returns how many were let through.
func failUntilBlocked(t *testing.T, f *throttle.Failures, client string) int {
	t.Helper()
	for n := 0; n < 1000; n++ {
		if wait, blocked := f.Blocked(ctx, client); blocked {
			if wait <= 0 || wait > time.Minute {
				t.Fatalf("blocked for %v", wait)
			}
			return n
		}
		f.Fail(ctx, client)
	}
	t.Fatal("never blocked")
	return 0
}

// TestFailuresAreCountedAcrossServers: two servers on one Redis share the
// count per client and overall; other clients are untouched until the
// overall count runs out.
func TestFailuresAreCountedAcrossServers(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	o := throttle.Options{Prefix: redistest.Prefix(t),
		PerClient: throttle.Limit{N: 3, Per: time.Minute}, Overall: throttle.Limit{N: 7, Per: time.Minute}}
	a, b := throttle.New(rdb, "admin", o), throttle.New(rdb, "admin", o)
	a.Fail(ctx, "192.0.2.1")
	a.Fail(ctx, "192.0.2.1")
	if _, blocked := b.Blocked(ctx, "192.0.2.1"); blocked {
		t.Fatal("blocked after 2 of 3")
	}
	b.Fail(ctx, "192.0.2.1")
	for name, f := range map[string]*throttle.Failures{"a": a, "b": b} {
		if wait, blocked := f.Blocked(ctx, "192.0.2.1"); !blocked || wait <= 0 || wait > 20*time.Second+time.Second {
			t.Fatalf("server %s after 3 failures: blocked %v for %v, want about 20 s (one failure forgotten)", name, blocked, wait)
		}
	}
	// A blocked client's further failures are not counted: it waits no longer.
	if _, blocked := a.Blocked(ctx, "192.0.2.2"); blocked {
		t.Fatal("another client blocked")
	}
	if got := failUntilBlocked(t, b, "192.0.2.2"); got != 3 {
		t.Fatalf("second client: %d failures before blocked, want 3", got)
	}
	// Overall: 6 of 7 used; one more from anyone, then everyone waits.
	a.Fail(ctx, "192.0.2.3")
	if _, blocked := b.Blocked(ctx, "192.0.2.4"); !blocked {
		t.Fatal("overall count ran out, a fresh client was not blocked")
	}
}

// TestFailuresFallBackToABoundedLocalCount: without Redis each server
// counts on its own, in a table that never holds more than LocalKeys
// clients (the rest count together).
func TestFailuresFallBackToABoundedLocalCount(t *testing.T) {
	dead := redis.NewUniversalClient(queue.FailFast(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:1"}}))
	t.Cleanup(func() { _ = dead.Close() })
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f := throttle.New(dead, "admin", throttle.Options{LocalKeys: 4, Now: func() time.Time { return now },
		PerClient: throttle.Limit{N: 2, Per: time.Minute}, Overall: throttle.Limit{N: 1_000_000, Per: time.Minute}})
	if got := failUntilBlocked(t, f, "192.0.2.1"); got != 2 {
		t.Fatalf("with Redis down: %d failures before blocked, want 2", got)
	}
	// 3 more clients fill the table (the overall key is the fifth)...
	for i := 2; i <= 4; i++ {
		f.Fail(ctx, fmt.Sprintf("192.0.2.%d", i))
	}
	// ...so new clients share one bucket: 2 failures among them all.
	f.Fail(ctx, "198.51.100.1")
	f.Fail(ctx, "198.51.100.2")
	if _, blocked := f.Blocked(ctx, "198.51.100.3"); !blocked {
		t.Fatal("clients beyond the table are not counted")
	}
	// Time forgets: after a minute the table has room again.
	now = now.Add(time.Minute)
	if _, blocked := f.Blocked(ctx, "192.0.2.1"); blocked {
		t.Fatal("still blocked a minute later")
	}
	if got := failUntilBlocked(t, f, "203.0.113.9"); got != 2 {
		t.Fatalf("new client after the table emptied: %d failures before blocked, want 2", got)
	}
}

func TestRetryAfterIsWholeSecondsAtLeastOne(t *testing.T) {
	for wait, want := range map[time.Duration]string{time.Millisecond: "1", time.Second: "1", 1001 * time.Millisecond: "2", 0: "1"} {
		if got := throttle.RetryAfter(wait); got != want {
			t.Errorf("RetryAfter(%v) = %s, want %s", wait, got, want)
		}
	}
}

// TestCountsOutliveARedisOutage: what Redis counted, each server keeps a
// copy of, so a client with failures on record does not start afresh when
// Redis goes away, and a blocked client is answered without asking Redis.
func TestCountsOutliveARedisOutage(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redis.NewUniversalClient(queue.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	f := throttle.New(rdb, "admin", throttle.Options{Prefix: redistest.Prefix(t),
		PerClient: throttle.Limit{N: 3, Per: time.Minute}, Overall: throttle.Limit{N: 1000, Per: time.Minute}})
	f.Fail(ctx, "192.0.2.1")
	f.Fail(ctx, "192.0.2.1")
	for i := 0; i < 3; i++ {
		f.Fail(ctx, "192.0.2.2")
	}
	rs.Kill()
	start := time.Now()
	if _, blocked := f.Blocked(ctx, "192.0.2.2"); !blocked {
		t.Fatal("blocked client let through once Redis went away")
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("a blocked client's answer waited %v on a dead Redis", d)
	}
	if got := failUntilBlocked(t, f, "192.0.2.1"); got != 1 {
		t.Fatalf("client with 2 of 3 failures on record: %d more before blocked with Redis down, want 1", got)
	}
}
