package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// testWaiters is a view of the line with pos as its positions and alive
// as its sign-of-life writer; the line itself is never asked.
func testWaiters(pos positionSource, alive aliveWriter) *Waiters {
	w := newWaiters(nil, pos, WaitersOptions{Logger: slog.Default()})
	w.alive = alive
	return w
}

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
	lp := testWaiters(view, nil)
	now := time.Now()
	lp.remember("r", []Ticket{{ID: "t1", State: vocab.StateWaiting, Position: 3, Score: 7}}, 0, now)
	got, ok := lp.local("r", "t1", "", now)
	if !ok || got.Position != 3 {
		t.Fatalf("after a store read of 3, a view of 4 gave %d (ok %v), want 3", got.Position, ok)
	}
	view.pos = 2
	if got, _ = lp.local("r", "t1", "", now); got.Position != 2 {
		t.Fatalf("the view caught up to 2, got %d", got.Position)
	}
	view.pos = 3
	if got, _ = lp.local("r", "t1", "", now); got.Position != 2 {
		t.Fatalf("the view went back to 3, got %d, want 2", got.Position)
	}
	// A later store read that lags what was shown does not move it back either.
	lp.remember("r", []Ticket{{ID: "t1", State: vocab.StateWaiting, Position: 3, Score: 7}}, 0, now)
	view.pos = 3
	if got, _ = lp.local("r", "t1", "", now); got.Position != 2 {
		t.Fatalf("after a store read of 3, got %d, want 2", got.Position)
	}
}

// TestAFirstReadOvertakenByAnAdmissionIsNotKept: a connection's first
// message was read, then an admission of that ticket was heard before the
// read was kept: the ticket is not served from the view (it may be
// admitted), nor is a read overtaken by a change of its room.
func TestAFirstReadOvertakenByAnAdmissionIsNotKept(t *testing.T) {
	lp := testWaiters(&staleView{pos: 4}, nil)
	now := time.Now()
	waiting := Ticket{ID: "t1", State: vocab.StateWaiting, Position: 4, Score: 7}

	gen := lp.gen.Load() // before the read
	lp.forget("r", []string{"t1"})
	if lp.remembered("r", waiting, gen, now) {
		t.Fatal("a read older than the admission of its ticket was kept")
	}
	if _, ok := lp.local("r", "t1", "", now); ok {
		t.Fatal("an admitted ticket was answered from the view")
	}

	other := Ticket{ID: "t2", State: vocab.StateWaiting, Position: 5, Score: 8}
	gen = lp.gen.Load()
	lp.forgetRoom("r")
	if lp.remembered("r", other, gen, now) {
		t.Fatal("a read older than its room's change was kept")
	}

	gen = lp.gen.Load()
	if !lp.remembered("r", other, gen, now) {
		t.Fatal("a read after every change was not kept")
	}
	if got, ok := lp.local("r", "t2", "", now); !ok || got.Position != 4 {
		t.Fatalf("kept ticket from the view: %d (ok %v), want 4", got.Position, ok)
	}
	if lp.remembered("r", Ticket{ID: "t3", State: vocab.StateAdmitted, Score: 9}, lp.gen.Load(), now) {
		t.Fatal("an admitted ticket was kept for the view")
	}
}

// aliveLog is a fake aliveWriter that records each call, in order.
type aliveLog struct {
	calls []string // "alive r t1,t2" or "present r server t1,t2"
	fail  bool     // Alive fails
}

func (a *aliveLog) Alive(_ context.Context, room string, ids []string) error {
	a.calls = append(a.calls, "alive "+room+" "+strings.Join(ids, ","))
	if a.fail {
		return errors.New("store down")
	}
	return nil
}

func (a *aliveLog) Present(_ context.Context, room, server string, open []string) error {
	ids := slices.Clone(open)
	slices.Sort(ids)
	a.calls = append(a.calls, "present "+room+" "+server+" "+strings.Join(ids, ","))
	return nil
}

// TestSignOfLifeIsOneSnapshotPerRoom: each flush writes one snapshot of
// the open connections per room, whatever their number; the tickets that
// left since the snapshot before are marked first (in seq order), so none
// goes without a sign of life between the two; a failed mark keeps the
// snapshot before, and is tried again.
func TestSignOfLifeIsOneSnapshotPerRoom(t *testing.T) {
	w := &aliveLog{}
	lp := testWaiters(&staleView{pos: 1}, w)
	open := map[string][]string{}
	lp.open = func() map[string][]string { return maps.Clone(open) }
	id := func(seq int) string { return fmt.Sprintf("%012d%020x", seq, seq) }
	var many []string
	for i := range 300 {
		many = append(many, id((i*7919)%1000+1)) // seqs out of order
	}
	flush := func(want ...string) {
		t.Helper()
		w.calls = nil
		lp.flush(context.Background(), time.Now())
		slices.Sort(w.calls) // rooms in any order; within one, "alive" sorts before "present"
		if !slices.Equal(w.calls, want) {
			t.Fatalf("calls\n%q\nwant\n%q", w.calls, want)
		}
	}
	s := lp.server
	open["r"] = many
	open["q"] = []string{id(5), id(3)}
	sorted := slices.Clone(many)
	slices.Sort(sorted)
	flush("present q "+s+" "+id(3)+","+id(5), "present r "+s+" "+strings.Join(sorted, ","))
	open["q"] = []string{id(3), id(9)}
	delete(open, "r")
	flush("alive q "+id(5), "alive r "+strings.Join(sorted, ","), "present q "+s+" "+id(3)+","+id(9), "present r "+s+" ")
	flush("present q " + s + " " + id(3) + "," + id(9)) // r: nothing open, nothing shown
	w.fail = true
	open["q"] = []string{id(3)}
	flush("alive q " + id(9)) // no snapshot without the mark
	w.fail = false
	flush("alive q "+id(9), "present q "+s+" "+id(3))
}

// fakeLine is a waiterLine whose store holds one ticket, read as ticket says.
type fakeLine struct {
	aliveLog
	ticket Ticket
	reads  int
}

func (l *fakeLine) Settings(context.Context, string) (Settings, error) { return DefaultSettings(), nil }
func (l *fakeLine) Status(_ context.Context, _, id, identity string) (Ticket, Settings, error) {
	l.reads++
	if id != l.ticket.ID || identity != l.ticket.Identity {
		return Ticket{}, Settings{}, ErrTicketNotFound
	}
	return l.ticket, DefaultSettings(), nil
}
func (l *fakeLine) StatusMany(context.Context, string, []string) ([]Ticket, Settings, error) {
	return nil, Settings{}, errors.New("not in this test")
}
func (l *fakeLine) Leave(context.Context, string, string, string) error { return nil }
func (l *fakeLine) Now() time.Time                                      { return time.Now() }

// TestPolledPlacesNeverGoBack: a poll's place from the store is kept
// when the view, a log read behind, says a later one; a store read that
// lags what a poll was told does not move it back either.
func TestPolledPlacesNeverGoBack(t *testing.T) {
	view := &staleView{pos: 4}
	line := &fakeLine{ticket: Ticket{Room: "r", ID: "t1", Identity: "v:me", State: vocab.StateWaiting, Position: 3, Score: 7}}
	w := newWaiters(line, view, WaitersOptions{})
	ctx := context.Background()
	poll := func(want int64) {
		t.Helper()
		got, _, err := w.Status(ctx, "r", "t1", "v:me")
		if err != nil || got.Position != want {
			t.Fatalf("poll: %d (%v), want %d", got.Position, err, want)
		}
	}
	poll(3) // the store's
	poll(3) // the view says 4
	if line.reads != 1 {
		t.Fatalf("%d store reads, want 1 (the first poll)", line.reads)
	}
	view.pos = 2
	poll(2)
	w.forget("r", []string{"t1"}) // an admission heard: read the store again
	poll(2)                       // it says 3: behind what the poll was told
	if line.reads != 2 {
		t.Fatalf("%d store reads, want 2", line.reads)
	}
}

// TestPollsAreOneSnapshotPerRoom: a hundred polls of a ticket are one
// snapshot at the next flush, not a write each; a room's open connections
// and its polled tickets share it; a poller that stopped is marked as it
// leaves the snapshot.
func TestPollsAreOneSnapshotPerRoom(t *testing.T) {
	line := &fakeLine{ticket: Ticket{Room: "r", ID: "p1", Identity: "v:me", State: vocab.StateWaiting, Position: 1, Score: 1}}
	w := newWaiters(line, &staleView{pos: 1}, WaitersOptions{})
	w.alive = &line.aliveLog
	w.open = func() map[string][]string { return map[string][]string{"r": {"s1"}} }
	ctx := context.Background()
	for range 100 {
		if _, _, err := w.Status(ctx, "r", "p1", "v:me"); err != nil {
			t.Fatal(err)
		}
	}
	if len(line.calls) != 0 {
		t.Fatalf("polls wrote %q before the flush, want nothing", line.calls)
	}
	w.flush(ctx, time.Now())
	if want := []string{"present r " + w.server + " p1,s1"}; !slices.Equal(line.calls, want) {
		t.Fatalf("calls %q, want %q", line.calls, want)
	}
	line.calls = nil
	w.flush(ctx, time.Now())
	if want := []string{"alive r p1", "present r " + w.server + " s1"}; !slices.Equal(line.calls, want) {
		t.Fatalf("calls %q, want %q", line.calls, want)
	}
}
