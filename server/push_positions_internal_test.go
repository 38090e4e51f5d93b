package server

import (
	"log/slog"
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
