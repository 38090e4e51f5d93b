package server

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// staleView is a fake positionSource: the position a lagging view gives.
type staleView struct{ pos int64 }

func (v *staleView) Watch(string) {}
func (v *staleView) Position(string, float64) (int64, int64, float64, bool) {
	return v.pos, 10, 1, true
}

// TestViewBehindTheStoreNeverMovesAPlaceBack: a store read gave place 3;
// the view, one log read behind, still says 4. The waiter must not see 4.
func TestViewBehindTheStoreNeverMovesAPlaceBack(t *testing.T) {
	view := &staleView{pos: 4}
	lp := newLocalPositions(view, nil, slog.Default())
	now := time.Now()
	lp.remember("r", []queue.Ticket{{ID: "t1", State: queue.StateWaiting, Position: 3, Score: 7}}, 0, now)
	got, ok := lp.local("r", "t1", now)
	if !ok || got.Position != 3 {
		t.Fatalf("after a store read of 3, a view of 4 gave %d (ok %v), want 3", got.Position, ok)
	}
	view.pos = 2
	if got, _ = lp.local("r", "t1", now); got.Position != 2 {
		t.Fatalf("the view caught up to 2, got %d", got.Position)
	}
	view.pos = 3
	if got, _ = lp.local("r", "t1", now); got.Position != 2 {
		t.Fatalf("the view went back to 3, got %d, want 2", got.Position)
	}
	// A later store read that lags what was shown does not move it back either.
	lp.remember("r", []queue.Ticket{{ID: "t1", State: queue.StateWaiting, Position: 3, Score: 7}}, 0, now)
	view.pos = 3
	if got, _ = lp.local("r", "t1", now); got.Position != 2 {
		t.Fatalf("after a store read of 3, got %d, want 2", got.Position)
	}
}

// TestAFirstReadOvertakenByAnAdmissionIsNotKept: a connection's first
// message was read, then an admission of that ticket was heard before the
// read was kept: the ticket is not served from the view (it may be
// admitted), nor is a read overtaken by a change of its room.
func TestAFirstReadOvertakenByAnAdmissionIsNotKept(t *testing.T) {
	lp := newLocalPositions(&staleView{pos: 4}, nil, slog.Default())
	now := time.Now()
	waiting := queue.Ticket{ID: "t1", State: queue.StateWaiting, Position: 4, Score: 7}

	gen := lp.gen.Load() // before the read
	lp.forget("r", []string{"t1"})
	if lp.remembered("r", waiting, gen, now) {
		t.Fatal("a read older than the admission of its ticket was kept")
	}
	if _, ok := lp.local("r", "t1", now); ok {
		t.Fatal("an admitted ticket was answered from the view")
	}

	other := queue.Ticket{ID: "t2", State: queue.StateWaiting, Position: 5, Score: 8}
	gen = lp.gen.Load()
	lp.forgetRoom("r")
	if lp.remembered("r", other, gen, now) {
		t.Fatal("a read older than its room's change was kept")
	}

	gen = lp.gen.Load()
	if !lp.remembered("r", other, gen, now) {
		t.Fatal("a read after every change was not kept")
	}
	if got, ok := lp.local("r", "t2", now); !ok || got.Position != 4 {
		t.Fatalf("kept ticket from the view: %d (ok %v), want 4", got.Position, ok)
	}
	if lp.remembered("r", queue.Ticket{ID: "t3", State: queue.StateAdmitted, Score: 9}, lp.gen.Load(), now) {
		t.Fatal("an admitted ticket was kept for the view")
	}
}

// aliveLog is a fake aliveWriter that records each call's ids.
type aliveLog struct{ calls [][]string }

func (a *aliveLog) Alive(_ context.Context, _ string, ids []string) error {
	a.calls = append(a.calls, ids)
	return nil
}

// TestSignOfLifeGoesInSeqOrder: the batched sign of life names its tickets
// in seq order, so the store's calls of consecutive ids each touch a few
// buckets of consecutive seqs rather than every bucket of the line.
func TestSignOfLifeGoesInSeqOrder(t *testing.T) {
	w := &aliveLog{}
	lp := newLocalPositions(&staleView{pos: 1}, w, slog.Default())
	now := time.Now()
	var want []string
	for i := range 300 {
		id := fmt.Sprintf("%012d%020x", (i*7919)%1000+1, i) // seqs out of order
		want = append(want, id)
		lp.remember("r", []queue.Ticket{{ID: id, State: queue.StateWaiting, Score: float64(i)}}, 0, now)
		if _, ok := lp.local("r", id, now); !ok {
			t.Fatalf("%s not served from the view", id)
		}
	}
	lp.flush(context.Background(), now)
	slices.Sort(want)
	if len(w.calls) != 1 || !slices.Equal(w.calls[0], want) {
		t.Fatalf("sign of life: %d calls, first %v..., want one call of the %d ids in order", len(w.calls), w.calls[0][:3], len(want))
	}
}
