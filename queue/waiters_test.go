package queue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// watchedStore is a store that counts what a line asks of it per ticket
// (reads and room reads), records the sign of life written, and can turn
// busy: every read then fails as a Redis pool that is exhausted does.
type watchedStore struct {
	queue.Store
	mu      sync.Mutex
	reads   int // Status, StatusMany, GetRoom
	busy    bool
	present map[string]time.Time // ticket -> time of the last snapshot naming it
	alive   map[string]time.Time // ticket -> time of its last mark
}

func newWatchedStore() *watchedStore {
	return &watchedStore{Store: memstore.New(), present: map[string]time.Time{}, alive: map[string]time.Time{}}
}

func (s *watchedStore) read() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.busy {
		return queue.ErrBusy
	}
	return nil
}

func (s *watchedStore) Status(ctx context.Context, room string, st *queue.Settings, id, identity string, now time.Time) (queue.Ticket, error) {
	if err := s.read(); err != nil {
		return queue.Ticket{}, err
	}
	return s.Store.Status(ctx, room, st, id, identity, now)
}

func (s *watchedStore) StatusMany(ctx context.Context, room string, st *queue.Settings, ids []string, now time.Time) ([]queue.Ticket, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	return s.Store.StatusMany(ctx, room, st, ids, now)
}

func (s *watchedStore) GetRoom(ctx context.Context, room string) (queue.Settings, error) {
	if err := s.read(); err != nil {
		return queue.Settings{}, err
	}
	return s.Store.GetRoom(ctx, room)
}

func (s *watchedStore) Present(ctx context.Context, room, server string, open []string, now time.Time) error {
	s.mu.Lock()
	for _, id := range open {
		s.present[id] = now
	}
	s.mu.Unlock()
	return s.Store.Present(ctx, room, server, open, now)
}

func (s *watchedStore) Alive(ctx context.Context, room string, ids []string, now time.Time) error {
	s.mu.Lock()
	for _, id := range ids {
		s.alive[id] = now
	}
	s.mu.Unlock()
	return s.Store.Alive(ctx, room, ids, now)
}

func (s *watchedStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

func (s *watchedStore) setBusy(b bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = b
}

// signs is when the ticket's last snapshot and last mark were written.
func (s *watchedStore) signs(id string) (present, alive time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.present[id], s.alive[id]
}

// waitersFixture is a line on a watched memory store with a fake clock
// (its settings cache never ages) and its waiters, running when run is
// set, with the sign of life every 10 ms.
type waitersFixture struct {
	store *watchedStore
	clock *clockwork.FakeClock
	line  *queue.Line
	w     *queue.Waiters
	ctx   context.Context
	keys  *token.Keyset
}

func newWaitersFixture(t *testing.T, run bool, s queue.Settings) *waitersFixture {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	f := &waitersFixture{store: newWatchedStore(), clock: clockwork.NewFakeClockAt(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)), keys: keys}
	f.line = queue.NewLine(f.store, keys, queue.LineOptions{Clock: f.clock})
	f.w = queue.NewWaiters(f.line, queue.WaitersOptions{PresentEvery: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	f.ctx = ctx
	if err := f.line.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	if run {
		done := make(chan struct{})
		go func() { defer close(done); _ = f.w.Run(ctx, queue.WaitersHooks{}) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return f
}

func pausedRoom() queue.Settings {
	s := queue.DefaultSettings()
	s.Paused, s.AbandonAfterS = true, queue.MinAbandonAfterS
	return s
}

func (f *waitersFixture) enter(t *testing.T, who string) queue.Ticket {
	t.Helper()
	tk, _, err := f.line.Enter(f.ctx, "sale", queue.VisitorIdentity(who))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func (f *waitersFixture) poll(t *testing.T, tk queue.Ticket) queue.Ticket {
	t.Helper()
	got, _, err := f.w.Status(f.ctx, "sale", tk.ID, tk.Identity)
	if err != nil {
		t.Fatalf("poll of %s: %v", tk.ID, err)
	}
	return got
}

// local polls tk until the view answers it: two polls in a row without a read.
func (f *waitersFixture) local(t *testing.T, tk queue.Ticket) {
	t.Helper()
	testkit.Until(t, 10*time.Second, "polls answered from the view", func() bool {
		before := f.store.readCount()
		f.poll(t, tk)
		f.poll(t, tk)
		return f.store.readCount() == before
	})
}

// TestAPollOfAWaitingTicketReadsNothing: a waiting ticket's first poll
// reads the store; once the view follows its room, a hundred polls read
// nothing, and their sign of life is the room's next snapshot.
func TestAPollOfAWaitingTicketReadsNothing(t *testing.T) {
	t.Parallel()
	f := newWaitersFixture(t, true, pausedRoom())
	f.enter(t, "first")
	tk := f.enter(t, "second")
	before := f.store.readCount()
	if got := f.poll(t, tk); got.State != vocab.StateWaiting || got.Position != 2 {
		t.Fatalf("first poll: %s at %d, want waiting at 2", got.State, got.Position)
	}
	if f.store.readCount() != before+1 {
		t.Fatalf("the first poll of a ticket new to the view read the store %d times, want once", f.store.readCount()-before)
	}
	f.local(t, tk)
	before = f.store.readCount()
	for range 100 {
		if got := f.poll(t, tk); got.State != vocab.StateWaiting || got.Position != 2 || got.Waiting != 2 || got.Stale {
			t.Fatalf("poll: %+v, want waiting at 2 of 2, not stale", got)
		}
	}
	if n := f.store.readCount() - before; n != 0 {
		t.Fatalf("100 polls read the store %d times, want none", n)
	}
	testkit.Until(t, 5*time.Second, "the polled ticket in a snapshot", func() bool {
		p, _ := f.store.signs(tk.ID)
		return p.Equal(f.clock.Now())
	})
	// Someone else asking with the ticket's id is not answered from the view.
	if _, _, err := f.w.Status(f.ctx, "sale", tk.ID, queue.VisitorIdentity("thief")); !errors.Is(err, queue.ErrTicketNotFound) {
		t.Fatalf("another visitor's poll: %v, want not found", err)
	}
}

// TestPollPositionsNeverGoUp: while the waiters ahead leave on another
// server, a poller's positions (from the view, or the store when the view
// lags) only go down, to the end.
func TestPollPositionsNeverGoUp(t *testing.T) {
	t.Parallel()
	f := newWaitersFixture(t, true, pausedRoom())
	other := queue.NewLine(f.store, f.keys, queue.LineOptions{Clock: f.clock})
	var ahead []queue.Ticket
	for _, who := range []string{"a", "b", "c", "d", "e", "f"} {
		ahead = append(ahead, f.enter(t, who))
	}
	tk := f.enter(t, "last")
	f.local(t, tk)
	last := f.poll(t, tk).Position
	for i, a := range ahead {
		if err := other.Leave(f.ctx, "sale", a.ID, a.Identity); err != nil {
			t.Fatal(err)
		}
		want := int64(len(ahead) - i)
		testkit.Eventually(t, 10*time.Second, func() error {
			got := f.poll(t, tk)
			if got.Position > last {
				t.Fatalf("position went up from %d to %d", last, got.Position)
			}
			last = got.Position
			if got.Position != want {
				return errors.New("not yet moved up")
			}
			return nil
		})
	}
}

// TestALeftTicketIsNotWaiting: a ticket left through the waiters is not
// answered waiting by the next poll, though the view's log read may not
// have the leave yet; one ended on another server is heard from the log.
func TestALeftTicketIsNotWaiting(t *testing.T) {
	t.Parallel()
	f := newWaitersFixture(t, true, pausedRoom())
	tk := f.enter(t, "leaver")
	f.local(t, tk)
	if err := f.w.Leave(f.ctx, "sale", tk.ID, tk.Identity); err != nil {
		t.Fatal(err)
	}
	if got := f.poll(t, tk); got.State != vocab.StateExpired || got.Reason != "left" {
		t.Fatalf("poll right after leave: %s (%s), want expired (left)", got.State, got.Reason)
	}

	elsewhere := f.enter(t, "elsewhere")
	f.local(t, elsewhere)
	other := queue.NewLine(f.store, f.keys, queue.LineOptions{Clock: f.clock})
	if err := other.Leave(f.ctx, "sale", elsewhere.ID, elsewhere.Identity); err != nil {
		t.Fatal(err)
	}
	testkit.Until(t, 10*time.Second, "the leave on another server heard", func() bool {
		return f.poll(t, elsewhere).State == vocab.StateExpired
	})
}

// TestAPollerThatStopsIsDropped: a poller's sign of life is the snapshot
// after its polls; once it stops it is marked as it leaves the snapshot,
// kept while abandon_after_s has not passed since, and abandoned after,
// while one that keeps polling stays.
func TestAPollerThatStopsIsDropped(t *testing.T) {
	t.Parallel()
	f := newWaitersFixture(t, true, pausedRoom())
	stops, stays := f.enter(t, "stops"), f.enter(t, "stays")
	f.local(t, stops)
	f.local(t, stays)
	t1 := f.clock.Now()
	testkit.Until(t, 5*time.Second, "the stopped poller marked as it leaves the snapshot", func() bool {
		p, a := f.store.signs(stops.ID)
		return p.Equal(t1) && a.Equal(t1)
	})
	tick := func() queue.Stats {
		t.Helper()
		s, err := f.line.Settings(f.ctx, "sale")
		if err != nil {
			t.Fatal(err)
		}
		s.Paused, s.Capacity = false, 0 // admit nobody: the tick only abandons
		if _, err := f.line.Tick(f.ctx, "sale", &s); err != nil {
			t.Fatal(err)
		}
		st, err := f.line.Stats(f.ctx, "sale", f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	keepPolling := func() {
		t.Helper()
		now := f.clock.Now()
		f.poll(t, stays)
		testkit.Until(t, 5*time.Second, "the poller's snapshot", func() bool {
			p, _ := f.store.signs(stays.ID)
			return p.Equal(now)
		})
	}
	f.clock.Advance(15 * time.Second)
	keepPolling()
	if st := tick(); st.Waiting != 2 || st.AbandonedTotal != 0 {
		t.Fatalf("15 s after the last poll: waiting %d, abandoned %d, want both waiting", st.Waiting, st.AbandonedTotal)
	}
	f.clock.Advance(15 * time.Second) // 30 s: past abandon_after_s (20) for the one that stopped
	keepPolling()
	if st := tick(); st.Waiting != 1 || st.AbandonedTotal != 1 {
		t.Fatalf("30 s after the last poll: waiting %d, abandoned %d, want the poller waiting, the other abandoned", st.Waiting, st.AbandonedTotal)
	}
	// The abandonment reaches the view with its next log read.
	testkit.Until(t, 10*time.Second, "the stopped poller seen abandoned", func() bool {
		got := f.poll(t, stops)
		return got.State == vocab.StateExpired && got.Reason == "abandoned"
	})
	if got := f.poll(t, stays); got.State != vocab.StateWaiting || got.Position != 1 {
		t.Fatalf("the poller: %s at %d, want waiting at 1", got.State, got.Position)
	}
}

// TestABusyStoreGivesAStaleAnswer: with every read failing as an exhausted
// pool does, a waiting ticket read before is answered with its last known
// place, marked stale, not an error; a ticket never read here has nothing
// to answer with, and a left one is not answered waiting.
func TestABusyStoreGivesAStaleAnswer(t *testing.T) {
	t.Parallel()
	f := newWaitersFixture(t, false, pausedRoom()) // no view: every poll reads the store
	f.enter(t, "first")
	tk, unknown := f.enter(t, "second"), f.enter(t, "third")
	if got := f.poll(t, tk); got.Position != 2 || got.Stale {
		t.Fatalf("poll: %+v, want 2, fresh", got)
	}
	f.store.setBusy(true)
	got := f.poll(t, tk)
	if got.State != vocab.StateWaiting || got.Position != 2 || got.Waiting < 2 || !got.Stale {
		t.Fatalf("poll while busy: %+v, want waiting at 2, stale", got)
	}
	if v, _ := f.line.View(got, &queue.Settings{}); !v.Stale {
		t.Fatal("the view of a stale answer is not marked stale")
	}
	if _, _, err := f.w.Status(f.ctx, "sale", unknown.ID, unknown.Identity); !errors.Is(err, queue.ErrBusy) {
		t.Fatalf("a ticket never read here, while busy: %v, want busy", err)
	}
	if _, _, err := f.w.Status(f.ctx, "sale", tk.ID, queue.VisitorIdentity("thief")); err == nil {
		t.Fatal("another visitor got the stale answer")
	}
	f.store.setBusy(false)
	if got := f.poll(t, tk); got.Stale || got.Position != 2 {
		t.Fatalf("poll once the store answers: %+v, want 2, fresh", got)
	}
	if err := f.w.Leave(f.ctx, "sale", tk.ID, tk.Identity); err != nil {
		t.Fatal(err)
	}
	f.store.setBusy(true)
	if _, _, err := f.w.Status(f.ctx, "sale", tk.ID, tk.Identity); err == nil {
		t.Fatal("a left ticket was answered while the store is busy")
	}
}
