package queue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/memstore"
	"github.com/waitroom/waitroom/internal/token"
	"github.com/waitroom/waitroom/queue"
)

// awaitPosition polls p until score has position want, failing after a
// generous bound (the follower is a goroutine reading a blocking log).
func awaitPosition(t *testing.T, p *queue.Positions, room string, score float64, want, waiting int64) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		pos, n, _, ok := p.Position(room, score)
		if ok && pos == want && n == waiting {
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("score %v: at %d of %d (ok %v), want %d of %d", score, pos, n, ok, want, waiting)
		}
	}
}

// TestPositionsFollowTheLine: a watched room's positions follow enters,
// admissions and a room deleted under the follower, without reading tickets.
func TestPositionsFollowTheLine(t *testing.T) {
	store := memstore.New()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	line := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
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
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if _, n, _, ok := p.Position("sale", float64(tickets[4].Seq)); !ok && n == 0 {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the deleted room's places are still there")
		}
	}
}
