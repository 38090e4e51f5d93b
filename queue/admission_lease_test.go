package queue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// TestLeaseTTLIsAboutTwoIntervalsWithinBounds: a dead holder is replaced
// within two ticks, yet a hiccup of a fast room does not move the lease and
// a minute-long interval does not keep a room unadmitted for minutes.
func TestLeaseTTLIsAboutTwoIntervalsWithinBounds(t *testing.T) {
	for _, c := range []struct{ interval, want time.Duration }{
		{50 * time.Millisecond, 200 * time.Millisecond},
		{200 * time.Millisecond, 400 * time.Millisecond},
		{time.Second, 2 * time.Second},
		{5 * time.Second, 10 * time.Second},
		{time.Minute, 10 * time.Second},
	} {
		if got := queue.LeaseTTL(c.interval); got != c.want {
			t.Errorf("LeaseTTL(%v) = %v, want %v", c.interval, got, c.want)
		}
	}
}

// TestAHolderThatLostItsLeaseStopsAtOnce: while this server's loop was
// away (a pause, a partition), its lease ended and another server took it.
// At its next round the loop learns so from the failed renewal and neither
// ticks nor counts the room as its own; it logs the change of hands.
func TestAHolderThatLostItsLeaseStopsAtOnce(t *testing.T) {
	store := memstore.New()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClock()
	line := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	s := queue.DefaultSettings()
	if err := line.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	interval := time.Duration(s.BatchIntervalMS) * time.Millisecond
	adm := queue.NewAdmitter(line)
	var ticks atomic.Int64
	adm.OnTick = func(string, queue.Settings, queue.TickResult) { ticks.Add(1) }
	wg.Go(func() { _ = adm.Run(ctx) })
	settle := func() {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		if err := clock.BlockUntilContext(wctx, 2); err != nil { // the list loop and the room's
			t.Fatalf("the loops never waited on the clock: %v", err)
		}
	}
	settle()
	if adm.Admitting() != 1 || ticks.Load() != 1 {
		t.Fatalf("alone: admitting %d rooms, %d ticks; want 1, 1", adm.Admitting(), ticks.Load())
	}

	// Another server, whose clock is past this lease's end, takes it over.
	l, err := store.Lease(ctx, "sale", "thief", clock.Now().Add(queue.LeaseTTL(interval)), queue.LeaseTTL(interval), interval, time.Time{})
	if err != nil || !l.Held || l.Previous != adm.ID {
		t.Fatalf("the other server's takeover: %+v %v", l, err)
	}
	clock.Advance(interval)
	settle()
	if adm.Admitting() != 0 || ticks.Load() != 1 {
		t.Fatalf("after losing the lease: admitting %d rooms, %d ticks; want 0, 1", adm.Admitting(), ticks.Load())
	}
}
