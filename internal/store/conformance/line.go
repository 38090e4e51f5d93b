package conformance

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

func testEnterIsIdempotentAcrossTabs(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	f.blockFastTrack(t, "sale")
	a := f.enter(t, "sale", "v:alice")
	b := f.enter(t, "sale", "v:alice")
	if a.ID != b.ID || a.Seq != b.Seq || b.Position != a.Position {
		t.Fatalf("second tab got %+v, first %+v", b, a)
	}
	if a.State != vocab.StateWaiting || a.Position != 1 {
		t.Fatalf("alice: state %s position %d, want waiting at 1", a.State, a.Position)
	}
	other := f.enter(t, "sale", "v:bob")
	if other.ID == a.ID || other.Position != 2 {
		t.Fatalf("bob: %+v", other)
	}
}

func testFastTrackHoldsThePaceAndNeverJumpsTheLine(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 3 })
	var states []queue.State
	for i := 0; i < 5; i++ {
		states = append(states, f.enter(t, "sale", fmt.Sprintf("v:%d", i)).State)
	}
	want := []queue.State{vocab.StateAdmitted, vocab.StateAdmitted, vocab.StateAdmitted, vocab.StateWaiting, vocab.StateWaiting}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Fatalf("burst into an empty room: %v, want %v", states, want)
	}
	// Next tick: the budget is new, but people wait, so a newcomer queues behind them.
	f.clock.Advance(200 * time.Millisecond)
	late := f.enter(t, "sale", "v:late")
	if late.State != vocab.StateWaiting || late.Position != 3 {
		t.Fatalf("newcomer while others wait: %s at %d, want waiting at 3", late.State, late.Position)
	}
	r := f.tick(t, "sale")
	if len(r.Admitted) != 3 || r.Admitted[2] != late.ID {
		t.Fatalf("tick admitted %v, want the two waiters then the newcomer", r.Admitted)
	}
}

func testFIFOUnderConcurrentEntries(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 50; s.Capacity = 2000; s.Paused = true })
	const n = 1000
	tickets := make([]queue.Ticket, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tk, _, err := f.line.Enter(context.Background(), "sale", fmt.Sprintf("v:%04d", i))
			tickets[i] = tk
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Entry order is the Redis sequence; positions must be exactly that order.
	sort.Slice(tickets, func(i, j int) bool { return tickets[i].Seq < tickets[j].Seq })
	for i, tk := range tickets {
		if tk.Seq != int64(i+1) {
			t.Fatalf("sequence has a gap or a repeat at %d: %d", i, tk.Seq)
		}
		if got := f.status(t, "sale", tk); got.Position != int64(i+1) {
			t.Fatalf("ticket with seq %d at position %d", tk.Seq, got.Position)
		}
	}
	s := f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 50; s.Capacity = 2000 })
	var admitted []string
	for len(admitted) < n {
		f.clock.Advance(time.Duration(s.BatchIntervalMS) * time.Millisecond)
		r := f.tick(t, "sale")
		if len(r.Admitted) == 0 {
			t.Fatalf("tick admitted nobody with %d left", n-len(admitted))
		}
		admitted = append(admitted, r.Admitted...)
	}
	for i, id := range admitted {
		if id != tickets[i].ID {
			t.Fatalf("admission %d is %s, want %s (entry order)", i, id, tickets[i].ID)
		}
	}
}

func testCapacityAndPaceAreNeverExceeded(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	s := f.room(t, "sale", func(s *queue.Settings) { s.Capacity = 25; s.BatchSize = 10; s.SessionTTLS = 2 })
	f.blockFastTrack(t, "sale")
	for i := 0; i < 200; i++ {
		f.enter(t, "sale", fmt.Sprintf("v:w%03d", i))
	}
	interval := time.Duration(s.BatchIntervalMS) * time.Millisecond
	total := 0
	for step := 0; step < 60; step++ {
		f.clock.Advance(interval)
		r := f.tick(t, "sale")
		if len(r.Admitted) > int(s.BatchSize) {
			t.Fatalf("tick %d admitted %d > batch size %d", step, len(r.Admitted), s.BatchSize)
		}
		total += len(r.Admitted)
		st, err := f.store.Stats(context.Background(), "sale", f.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if st.Active > s.Capacity {
			t.Fatalf("tick %d: %d active > capacity %d", step, st.Active, s.Capacity)
		}
	}
	// 60 ticks of 200 ms = 12 s with 2 s sessions: slots were reclaimed and reused.
	if total <= int(s.Capacity) {
		t.Fatalf("only %d admitted: expired slots were not reclaimed", total)
	}
}

// A batch can be as large as the settings allow (10,000): a store that
// handles the head of the line in one piece must still admit it in one
// tick (Lua's unpack stops near 8,000 values; the tick failed every time).
func testTheLargestBatchIsAdmittedInOneTick(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "drop", func(s *queue.Settings) { s.Capacity = 1_000_000; s.BatchSize = 1; s.AbandonAfterS = 3600 })
	f.blockFastTrack(t, "drop")
	const waiting = 8_100
	for i := 0; i < waiting; i++ {
		f.enter(t, "drop", fmt.Sprintf("v:w%05d", i))
	}
	s := f.room(t, "drop", func(s *queue.Settings) { s.Capacity = 1_000_000; s.BatchSize = 10_000; s.AbandonAfterS = 3600 })
	f.clock.Advance(time.Duration(s.BatchIntervalMS) * time.Millisecond)
	r := f.tick(t, "drop")
	if len(r.Admitted) != waiting {
		t.Fatalf("one tick with batch size %d admitted %d of %d waiting", s.BatchSize, len(r.Admitted), waiting)
	}
	st, err := f.store.Stats(context.Background(), "drop", f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Waiting != 0 {
		t.Errorf("%d still waiting after the tick", st.Waiting)
	}
}

func testPaceHoldsAcrossFastTrackAndTickInOneInterval(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 4 })
	for i := 0; i < 3; i++ {
		if tk := f.enter(t, "sale", fmt.Sprintf("v:%d", i)); tk.State != vocab.StateAdmitted {
			t.Fatalf("entry %d not fast-tracked", i)
		}
	}
	for i := 3; i < 10; i++ {
		f.enter(t, "sale", fmt.Sprintf("v:%d", i)) // the 4th is fast-tracked, then the line forms
	}
	if r := f.tick(t, "sale"); len(r.Admitted) != 0 {
		t.Fatalf("same interval: tick admitted %d on top of 4 fast-tracked", len(r.Admitted))
	}
	f.clock.Advance(200 * time.Millisecond)
	r := f.tick(t, "sale")
	if len(r.Admitted) != 4 {
		t.Fatalf("next interval admitted %d, want 4", len(r.Admitted))
	}
	for _, w := range r.Waits {
		if w != 200*time.Millisecond {
			t.Fatalf("waits %v, want 200ms each (entered at t0, admitted 200 ms later)", r.Waits)
		}
	}
	if len(r.Waits) != len(r.Admitted) {
		t.Fatalf("%d waits for %d admissions", len(r.Waits), len(r.Admitted))
	}
}

func testJitterSpreadsOrderableAt(t *testing.T, target Open) {
	f := newFixture(t, target, queue.DefaultJitter)
	s := f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 100; s.Capacity = 1000; s.JitterMS = 1000; s.Paused = true })
	var tickets []queue.Ticket
	for i := 0; i < 500; i++ {
		tickets = append(tickets, f.enter(t, "sale", fmt.Sprintf("v:%d", i)))
	}
	s.Paused = false
	f.room(t, "sale", func(x *queue.Settings) { *x = s })
	for i := 0; i < 5; i++ {
		f.clock.Advance(200 * time.Millisecond)
		f.tick(t, "sale")
	}
	lo, hi := time.Hour, time.Duration(0)
	for _, tk := range tickets {
		got := f.status(t, "sale", tk)
		if got.State != vocab.StateAdmitted {
			t.Fatalf("ticket %s %s", tk.ID, got.State)
		}
		d := got.OrderableAt.Sub(got.AdmittedAt)
		if d < 0 || d >= time.Second {
			t.Fatalf("jitter %v outside [0, 1s)", d)
		}
		lo, hi = min(lo, d), max(hi, d)
		if want := got.OrderableAt.Add(time.Duration(s.SessionTTLS) * time.Second); !got.ExpiresAt.Equal(want) {
			t.Fatalf("expires %v, want orderable + ttl %v", got.ExpiresAt, want)
		}
	}
	if lo > 50*time.Millisecond || hi < 950*time.Millisecond {
		t.Fatalf("500 jitters span only [%v, %v]: not spread over [0, 1s)", lo, hi)
	}
}

func testAbandonedWaitersLoseTheirPlace(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.AbandonAfterS = 30; s.Paused = true })
	ghost := f.enter(t, "sale", "v:ghost")
	live := f.enter(t, "sale", "v:live")
	if live.Position != 2 {
		t.Fatalf("live at %d", live.Position)
	}
	for i := 0; i < 4; i++ { // 40 s: the live waiter polls every 10 s, the ghost never
		f.clock.Advance(10 * time.Second)
		f.status(t, "sale", live)
		f.tick(t, "sale")
	}
	if got := f.status(t, "sale", live); got.Position != 1 {
		t.Fatalf("live waiter at %d after the ghost left, want 1", got.Position)
	}
	got := f.status(t, "sale", ghost)
	if got.State != vocab.StateExpired || got.Reason != "abandoned" {
		t.Fatalf("ghost: %s (%s), want expired (abandoned)", got.State, got.Reason)
	}
	if again := f.enter(t, "sale", "v:ghost"); again.ID == ghost.ID || again.Position != 2 {
		t.Fatalf("ghost re-entering: %+v, want a new ticket at the back", again)
	}
	st, _ := f.store.Stats(context.Background(), "sale", f.clock.Now())
	if st.AbandonedTotal != 1 {
		t.Fatalf("abandoned_total %d", st.AbandonedTotal)
	}
}

func testPositionNeverGoesUp(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 2 })
	f.blockFastTrack(t, "sale")
	var mine queue.Ticket
	for i := 0; i < 30; i++ {
		tk := f.enter(t, "sale", fmt.Sprintf("v:%d", i))
		if i == 20 {
			mine = tk
		}
	}
	last := mine.Position
	for step := 0; step < 40; step++ {
		f.clock.Advance(200 * time.Millisecond)
		f.tick(t, "sale")
		f.enter(t, "sale", fmt.Sprintf("v:late%d", step)) // people keep arriving behind
		got := f.status(t, "sale", mine)
		if got.State == vocab.StateAdmitted {
			return
		}
		if got.Position > last {
			t.Fatalf("position went up from %d to %d", last, got.Position)
		}
		last = got.Position
	}
	t.Fatal("never admitted")
}

func testLeaveFreesThePlace(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.Paused = true })
	a := f.enter(t, "sale", "v:a")
	b := f.enter(t, "sale", "v:b")
	if err := f.line.Leave(context.Background(), "sale", a.ID, "v:b"); err != queue.ErrTicketNotFound {
		t.Fatalf("leaving someone else's ticket: %v", err)
	}
	if err := f.line.Leave(context.Background(), "sale", a.ID, "v:a"); err != nil {
		t.Fatal(err)
	}
	if got := f.status(t, "sale", b); got.Position != 1 {
		t.Fatalf("b at %d after a left", got.Position)
	}
}

func testStatusIsOnlyForTheOwner(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	a := f.enter(t, "sale", "v:a")
	if _, _, err := f.line.Status(context.Background(), "sale", a.ID, "v:mallory"); err != queue.ErrTicketNotFound {
		t.Fatalf("foreign read: %v", err)
	}
}

func testClosedRoomAnswersClosed(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { end := t0.Add(time.Minute); s.EndsAt = &end; s.BatchSize = 1 })
	if tk := f.enter(t, "sale", "v:a"); tk.State != vocab.StateAdmitted {
		t.Fatalf("before ends_at: %s", tk.State)
	}
	waiter := f.enter(t, "sale", "v:waiter")
	f.clock.Advance(time.Minute)
	if tk := f.enter(t, "sale", "v:b"); tk.State != vocab.StateClosed {
		t.Fatalf("after ends_at: %s", tk.State)
	}
	// Someone already in line keeps the place: ends_at closes the door only.
	if tk := f.enter(t, "sale", "v:waiter"); tk.ID != waiter.ID || tk.State != vocab.StateWaiting || tk.Position != 1 {
		t.Fatalf("waiter after ends_at: %+v", tk)
	}
}

func testActivationOffAdmitsEveryoneAtOnce(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.Activation = queue.ActivationOff; s.BatchSize = 1 })
	for i := 0; i < 20; i++ {
		if tk := f.enter(t, "sale", fmt.Sprintf("v:%d", i)); tk.State != vocab.StateAdmitted {
			t.Fatalf("entry %d: %s", i, tk.State)
		}
	}
}

func testPausedRoomKeepsPlacesAndAdmitsNobody(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.Paused = true })
	a := f.enter(t, "sale", "v:a")
	if a.State != vocab.StateWaiting {
		t.Fatalf("paused room fast-tracked: %s", a.State)
	}
	f.clock.Advance(time.Second)
	if r := f.tick(t, "sale"); len(r.Admitted) != 0 {
		t.Fatalf("paused room admitted %v", r.Admitted)
	}
	f.room(t, "sale", nil)
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 1 {
		t.Fatalf("resumed room admitted %v", r.Admitted)
	}
}

func testTwoServersAdmitEachSlotOnce(t *testing.T, target Open) {
	shared := target(t) // two servers on one store
	a := newFixtureOn(t, shared, nil)
	b := newFixtureOn(t, shared, nil)
	s := a.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 7; s.Capacity = 50; s.Paused = true })
	for i := 0; i < 100; i++ {
		a.enter(t, "sale", fmt.Sprintf("v:%d", i))
	}
	s.Paused = false
	a.room(t, "sale", func(x *queue.Settings) { *x = s })
	seen := map[string]bool{}
	for step := 0; step < 20; step++ {
		a.clock.Advance(200 * time.Millisecond)
		b.clock.Advance(200 * time.Millisecond)
		var ra, rb queue.TickResult
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); ra = a.tick(t, "sale") }()
		go func() { defer wg.Done(); rb = b.tick(t, "sale") }()
		wg.Wait()
		got := append(ra.Admitted, rb.Admitted...)
		if len(got) > int(s.BatchSize) {
			t.Fatalf("tick %d: two servers admitted %d > batch %d", step, len(got), s.BatchSize)
		}
		for _, id := range got {
			if seen[id] {
				t.Fatalf("ticket %s admitted twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 50 {
		t.Fatalf("admitted %d, want capacity 50", len(seen))
	}
}

func testSettingsChangesApplyWithinOneTick(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 2 })
	f.blockFastTrack(t, "sale")
	for i := 0; i < 50; i++ {
		f.enter(t, "sale", fmt.Sprintf("v:%d", i))
	}
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 2 {
		t.Fatalf("admitted %d, want 2", len(r.Admitted))
	}
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 9 })
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 9 {
		t.Fatalf("after the change admitted %d, want 9", len(r.Admitted))
	}
}

func testAdaptiveRoomAdmitsAtOnceWhileTheLineIsClosed(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	open := false
	f.line = queue.NewLine(f.server(), f.keys, queue.LineOptions{Clock: f.clock, LineOpen: func(string) bool { return open }})
	f.room(t, "sale", func(s *queue.Settings) {
		s.BatchSize = 2
		s.Activation = queue.ActivationAdaptive
		s.Adaptive = &queue.Adaptive{Signal: queue.SignalGateInflight, OpenAt: 0.7, CloseAt: 0.5}
	})
	for i := 0; i < 5; i++ {
		if tk := f.enter(t, "sale", fmt.Sprintf("v:closed%d", i)); tk.State != vocab.StateAdmitted || tk.ExpiresAt.IsZero() {
			t.Fatalf("closed line: entry %d %s", i, tk.State)
		}
	}
	// People still waiting from an open line keep their turn when it closes.
	open = true
	f.clock.Advance(200 * time.Millisecond)
	for i := 0; i < 3; i++ {
		f.enter(t, "sale", fmt.Sprintf("v:queued%d", i))
	}
	open = false
	if tk := f.enter(t, "sale", "v:late"); tk.State != vocab.StateWaiting {
		t.Fatalf("closed line with people waiting let a newcomer in: %s", tk.State)
	}
	for i := 0; i < 3; i++ {
		f.clock.Advance(200 * time.Millisecond)
		f.tick(t, "sale")
	}
	open = true
	f.clock.Advance(200 * time.Millisecond)
	var states []queue.State
	for i := 0; i < 4; i++ {
		states = append(states, f.enter(t, "sale", fmt.Sprintf("v:open%d", i)).State)
	}
	if fmt.Sprint(states) != "[admitted admitted waiting waiting]" {
		t.Fatalf("open line: %v, want the pace to hold", states)
	}
	st, _ := f.store.Stats(context.Background(), "sale", f.clock.Now())
	if st.Active != 11 {
		t.Fatalf("active %d: entries while closed must still count against capacity", st.Active)
	}
}

func testSwitchingActivationOffDrainsTheLine(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.Paused = true; s.BatchSize = 2 })
	waiter := f.enter(t, "sale", "v:waiter")
	f.room(t, "sale", func(s *queue.Settings) { s.Activation = queue.ActivationOff; s.BatchSize = 2 })
	if tk := f.enter(t, "sale", "v:newcomer"); tk.State != vocab.StateAdmitted {
		t.Fatalf("newcomer with activation off: %s", tk.State)
	}
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 1 || r.Admitted[0] != waiter.ID {
		t.Fatalf("tick admitted %v: the waiter from before must not be stranded", r.Admitted)
	}
}

// TestFastTrackAfterAPaceChange: the fast track into an empty line shares
// the tick budget, so it too must survive a longer interval.
func testFastTrackAfterAPaceChange(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 1; s.BatchIntervalMS = 200 })
	if tk := f.enter(t, "sale", "v:first"); tk.State != vocab.StateAdmitted {
		t.Fatalf("first into an empty room: %s", tk.State)
	}
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 1; s.BatchIntervalMS = 1000 })
	f.clock.Advance(time.Second)
	if tk := f.enter(t, "sale", "v:second"); tk.State != vocab.StateAdmitted {
		t.Fatalf("into an empty room one new interval after slowing down: %s", tk.State)
	}
	if tk := f.enter(t, "sale", "v:third"); tk.State != vocab.StateWaiting {
		t.Fatalf("a second entry in the same tick: %s, want waiting", tk.State)
	}
}
