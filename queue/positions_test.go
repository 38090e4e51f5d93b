package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/queue"
)

// awaitPosition polls p until score has position want, failing after a
// generous bound (the follower is a goroutine reading a blocking log).
func awaitPosition(t *testing.T, p *queue.Positions, room string, score float64, want, waiting int64) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, func() error {
		pos, n, _, ok := p.Position(room, score)
		if ok && pos == want && n == waiting {
			return nil
		}
		return fmt.Errorf("score %v: at %d of %d (ok %v), want %d of %d", score, pos, n, ok, want, waiting)
	})
}

// TestPositionsFollowTheLine: a watched room's positions follow enters,
// admissions and a room deleted under the follower, without reading tickets.
func TestPositionsFollowTheLine(t *testing.T) {
	store := memstore.New()
	line, clock := fakeClockLine(t, store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := queue.DefaultSettings()
	s.Paused, s.BatchSize = true, 2
	if err := line.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	var tickets []queue.Ticket
	for i := range 5 {
		tk, _, err := line.Enter(ctx, "sale", fmt.Sprintf("v:%d", i))
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	p := queue.NewPositions(store, queue.PositionsOptions{Poll: 10 * time.Millisecond, CheckEvery: 20 * time.Millisecond})
	p.Watch("sale")
	if _, _, _, ok := p.Position("sale", float64(tickets[4].Seq)); ok {
		t.Fatal("a position before the follower ran")
	}
	go func() { _ = p.Run(ctx) }()
	awaitPosition(t, p, "sale", float64(tickets[4].Seq), 5, 5)

	// Two admitted: everyone behind moves up two, from the log alone.
	s.Paused = false
	if err := line.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if r, err := line.Tick(ctx, "sale", &s); err != nil || len(r.Admitted) != 2 {
		t.Fatalf("tick: %v %v", r, err)
	}
	awaitPosition(t, p, "sale", float64(tickets[4].Seq), 3, 3)
	if _, _, _, ok := p.Position("sale", float64(tickets[0].Seq)); ok {
		t.Fatal("an admitted ticket still has a position")
	}

	// The room deleted: the follower sees it from the log's head and drops every place.
	if err := line.DeleteRoom(ctx, "sale"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, func() error {
		if _, n, _, ok := p.Position("sale", float64(tickets[4].Seq)); !ok && n == 0 {
			return nil
		}
		return errors.New("the deleted room's places are still there")
	})
}

// countingLog counts the change log reads of a store.
type countingLog struct {
	*memstore.Store
	reads atomic.Int64
}

func (c *countingLog) ReadLog(ctx context.Context, room string, after queue.LogPos, limit int, wait time.Duration) ([]queue.LogEntry, error) {
	c.reads.Add(1)
	return c.Store.ReadLog(ctx, room, after, limit, wait)
}

// TestPositionsReadTheLogOncePerPoll: while the line changes, a follower
// reads the log once per Poll (a read that found entries does not call for
// another at once), so its reads do not grow with the enters per second.
func TestPositionsReadTheLogOncePerPoll(t *testing.T) {
	store := &countingLog{Store: memstore.New()}
	line, clock := fakeClockLine(t, store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := queue.DefaultSettings()
	s.Paused = true
	if err := line.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	if _, _, err := line.Enter(ctx, "sale", "v:0"); err != nil {
		t.Fatal(err)
	}
	const poll = 250 * time.Millisecond
	p := queue.NewPositions(store, queue.PositionsOptions{Clock: clock, Poll: poll, CheckEvery: time.Hour})
	p.Watch("sale")
	go func() { _ = p.Run(ctx) }()
	blocked := func() {
		t.Helper()
		bctx, bcancel := context.WithTimeout(ctx, 20*time.Second)
		defer bcancel()
		if err := clock.BlockUntilContext(bctx, 1); err != nil {
			t.Fatalf("the follower never waited for its next read: %v", err)
		}
	}
	blocked() // synced, one read that found nothing new
	for round := 1; round <= 3; round++ {
		before := store.reads.Load()
		for i := range 3 {
			if _, _, err := line.Enter(ctx, "sale", fmt.Sprintf("r%d:%d", round, i)); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(poll)
		blocked()
		if got := store.reads.Load() - before; got != 1 {
			t.Fatalf("round %d: %d log reads for one Poll with 3 new entries, want 1", round, got)
		}
	}
}
