package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// lease asks store for room's admitter lease as holder at t0+at.
func lease(t *testing.T, store queue.Store, holder string, at, ttl, interval time.Duration, admitted time.Time) queue.Lease {
	t.Helper()
	l, err := store.Lease(context.Background(), "sale", holder, t0.Add(at), ttl, interval, admitted)
	if err != nil {
		t.Fatalf("lease for %s at +%v: %v", holder, at, err)
	}
	return l
}

func expectLease(t *testing.T, what string, l queue.Lease, held, due bool, holder string, until time.Duration) {
	t.Helper()
	if l.Held != held || l.Due != due || l.Holder != holder || !l.Until.Equal(t0.Add(until)) {
		t.Fatalf("%s: %+v, want held %v, due %v, holder %s until +%v", what, l, held, due, holder, until)
	}
}

func testLeaseHasOneHolderAtATime(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	a, b := f.store, f.server()
	const ttl, interval = 400 * time.Millisecond, 200 * time.Millisecond
	var none time.Time

	l := lease(t, a, "a", 0, ttl, interval, none)
	expectLease(t, "the first to ask", l, true, true, "a", ttl)
	if l.Previous != "" || !l.LastTick.IsZero() {
		t.Fatalf("a new lease took over %q, last tick %v", l.Previous, l.LastTick)
	}
	expectLease(t, "another server while a holds it", lease(t, b, "b", 100*time.Millisecond, ttl, interval, none), false, false, "a", ttl)
	// Another holder id, asking for a longer lease and a faster pace, gets
	// neither while a holds it.
	expectLease(t, "mallory", lease(t, b, "mallory", 150*time.Millisecond, time.Hour, time.Millisecond, none), false, false, "a", ttl)
	expectLease(t, "a renews", lease(t, a, "a", 200*time.Millisecond, ttl, interval, none), true, true, "a", 600*time.Millisecond)
	expectLease(t, "b when the first lease would have ended", lease(t, b, "b", 400*time.Millisecond, ttl, interval, none), false, false, "a", 600*time.Millisecond)

	// a stops renewing (it died): b takes over when the lease ends, not before.
	expectLease(t, "b a moment before the end", lease(t, b, "b", 599*time.Millisecond, ttl, interval, none), false, false, "a", 600*time.Millisecond)
	l = lease(t, b, "b", 600*time.Millisecond, ttl, interval, none)
	expectLease(t, "b at the end", l, true, true, "b", time.Second)
	if l.Previous != "a" {
		t.Fatalf("b took over from %q, want a", l.Previous)
	}
	// a comes back from its pause: it learns that it lost the lease.
	expectLease(t, "a after its pause", lease(t, a, "a", 650*time.Millisecond, ttl, interval, none), false, false, "b", time.Second)
}

func testLeaseKeepsThePaceAcrossHolders(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	a, b := f.store, f.server()
	const interval = time.Minute
	ttl := queue.LeaseTTL(interval) // shorter than the interval: renewed between ticks
	if ttl >= interval {
		t.Fatalf("lease of a minute-long interval: %v", ttl)
	}
	var none time.Time

	expectLease(t, "a's first tick", lease(t, a, "a", 0, ttl, interval, none), true, true, "a", ttl)
	// a's tick admitted someone: the lease keeps its start.
	l := lease(t, a, "a", time.Millisecond, ttl, interval, t0)
	expectLease(t, "a records its admitting tick", l, true, false, "a", ttl+time.Millisecond)
	if !l.LastTick.Equal(t0) {
		t.Fatalf("last tick %v, want %v", l.LastTick, t0)
	}
	expectLease(t, "a renews between ticks", lease(t, a, "a", ttl/2, ttl, interval, none), true, false, "a", ttl/2+ttl)

	// a dies; b takes over once the lease ends, but waits out a's interval.
	end := ttl/2 + ttl
	l = lease(t, b, "b", end, ttl, interval, none)
	expectLease(t, "b takes over", l, true, false, "b", end+ttl)
	if !l.LastTick.Equal(t0) || l.Previous != "a" {
		t.Fatalf("b took over from %q with last tick %v, want a's at %v", l.Previous, l.LastTick, t0)
	}
	expectLease(t, "b an interval after a's tick", lease(t, b, "b", interval, ttl, interval, none), true, true, "b", interval+ttl)

	// An admission of a server that lost the lease still counts for the pace.
	late := t0.Add(interval + time.Second)
	l = lease(t, a, "a", interval+2*time.Second, ttl, interval, late)
	if l.Held || !l.LastTick.Equal(late) {
		t.Fatalf("a's late admission: %+v, want b holding with last tick %v", l, late)
	}
	expectLease(t, "b after a's late admission", lease(t, b, "b", 2*interval, ttl, interval, none), true, false, "b", 2*interval+ttl)
	expectLease(t, "b an interval after it", lease(t, b, "b", 2*interval+time.Second, ttl, interval, none), true, true, "b", 2*interval+time.Second+ttl)
}

func testLeaseGoesWithTheRoom(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	const ttl, interval = 400 * time.Millisecond, 200 * time.Millisecond
	lease(t, f.store, "a", 0, ttl, interval, t0)
	if err := f.line.DeleteRoom(context.Background(), "sale"); err != nil {
		t.Fatal(err)
	}
	l := lease(t, f.server(), "b", time.Millisecond, ttl, interval, time.Time{})
	if !l.Held || !l.Due || l.Previous != "" || !l.LastTick.IsZero() {
		t.Fatalf("lease after the room was deleted: %+v, want a new one", l)
	}
}
