package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// A slot is held only by someone who came: an admitted visitor who does not
// arrive at checkout within arrival_window_s of orderable_at, or who comes
// and then goes quiet for idle_after_s, loses the slot to the next in line,
// and the token stops verifying.

// at advances the clock to t0 + d.
func (f *fixture) at(d time.Duration) {
	f.clock.Advance(t0.Add(d).Sub(f.clock.Now()))
}

// active is the store's read-only word on a ticket's slot.
func (f *fixture) active(t *testing.T, room, id string) (bool, string) {
	t.Helper()
	ok, why, err := f.store.Active(context.Background(), room, id, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ok, why
}

func (f *fixture) verify(t *testing.T, room, tok string) queue.Verdict {
	t.Helper()
	v, err := f.line.Verify(context.Background(), tok, room)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testNoShowsLoseTheSlotToTheNextInLine(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	f.room(t, "sale", func(s *queue.Settings) { s.Capacity, s.ArrivalWindowS, s.AbandonAfterS = 1, 60, 3600 })
	a, aTok := f.admitted(t, "sale", "v:a") // fast track, at t0
	f.at(time.Second)
	b := f.enter(t, "sale", "v:b")
	if b.State != vocab.StateWaiting {
		t.Fatalf("b over capacity: %s", b.State)
	}
	f.at(60*time.Second - time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 0 || r.Reclaimed != 0 {
		t.Fatalf("a's slot taken within its arrival window: %+v", r)
	}
	if ok, why := f.active(t, "sale", a.ID); !ok {
		t.Fatalf("a within its window: %q", why)
	}
	f.at(60 * time.Second)
	// Lapsed at once, before any tick: the token no longer verifies.
	if ok, why := f.active(t, "sale", a.ID); ok || why != "no_show" {
		t.Fatalf("a after its window, before the tick: %v %q", ok, why)
	}
	r := f.tick(t, "sale")
	if r.Reclaimed != 1 || r.NoShows != 1 || r.Idle != 0 || len(r.Admitted) != 1 || r.Admitted[0] != b.ID {
		t.Fatalf("the no-show's slot did not go to b: %+v", r)
	}
	if v := f.verify(t, "sale", aTok); v.Valid || v.Reason != "no_show" {
		t.Fatalf("a no-show's token: %+v", v)
	}
	if got := f.status(t, "sale", a); got.State != vocab.StateExpired || got.Reason != "no_show" {
		t.Fatalf("a no-show's ticket: %s/%s", got.State, got.Reason)
	}
	// b, admitted by the tick, has the same window from its own turn.
	b = f.status(t, "sale", b)
	if b.State != vocab.StateAdmitted {
		t.Fatalf("b: %s", b.State)
	}
	f.at(b.OrderableAt.Sub(t0) + 60*time.Second)
	if r := f.tick(t, "sale"); r.NoShows != 1 {
		t.Fatalf("b never came and kept its slot: %+v", r)
	}
	st, err := f.store.Stats(context.Background(), "sale", f.clock.Now())
	if err != nil || st.NoShowTotal != 2 || st.IdleTotal != 0 || st.ExpiredTotal != 2 || st.Active != 0 {
		t.Fatalf("stats: %+v %v", st, err)
	}
}

func testArrivingKeepsTheSlot(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	s := f.room(t, "sale", func(s *queue.Settings) { s.Capacity, s.ArrivalWindowS, s.AbandonAfterS = 1, 60, 3600 })
	a, aTok := f.admitted(t, "sale", "v:a")
	f.at(59 * time.Second)
	if v := f.verify(t, "sale", aTok); !v.Valid { // a comes to checkout
		t.Fatalf("a arriving: %+v", v)
	}
	f.enter(t, "sale", "v:b")
	f.at(4 * time.Minute)
	if r := f.tick(t, "sale"); r.Reclaimed != 0 || len(r.Admitted) != 0 {
		t.Fatalf("an arrived visitor lost the slot: %+v", r)
	}
	if v := f.verify(t, "sale", aTok); !v.Valid {
		t.Fatalf("an arrived visitor's token: %+v", v)
	}
	// Without idle_after_s the session runs its full length, and ends as before.
	f.at(time.Duration(s.SessionTTLS) * time.Second)
	r := f.tick(t, "sale")
	if r.Reclaimed != 1 || r.NoShows != 0 || r.Idle != 0 || len(r.Admitted) != 1 {
		t.Fatalf("session end: %+v", r)
	}
	if got := f.status(t, "sale", a); got.Reason != "reclaimed" {
		t.Fatalf("an arrived visitor's session ended as %q", got.Reason)
	}
	// Off (0): a visitor who never comes holds the slot for the session.
	f.room(t, "off", func(s *queue.Settings) { s.Capacity, s.ArrivalWindowS = 1, 0 })
	c, _ := f.admitted(t, "off", "v:c")
	f.clock.Advance(time.Duration(s.SessionTTLS)*time.Second - time.Millisecond)
	if ok, why := f.active(t, "off", c.ID); !ok {
		t.Fatalf("with the window off: %q", why)
	}
}

func testIdleVisitorsLoseTheSlot(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	f.room(t, "sale", func(s *queue.Settings) { s.Capacity, s.ArrivalWindowS, s.IdleAfterS, s.AbandonAfterS = 1, 60, 40, 3600 })
	a, aTok := f.admitted(t, "sale", "v:a")
	b := f.enter(t, "sale", "v:b")
	// Requests at 5 s and 10 s: the first sets the deadline at 5 + 40 + 10
	// (a quarter of idle_after_s of slack), the second would move it by
	// less than that quarter, so it is not written; the quiet visitor
	// lapses 45 s after its last request: never sooner than idle_after_s.
	for _, at := range []time.Duration{5 * time.Second, 10 * time.Second} {
		f.at(at)
		if v := f.verify(t, "sale", aTok); !v.Valid {
			t.Fatalf("a at %s: %+v", at, v)
		}
	}
	f.at(55*time.Second - time.Millisecond)
	if r := f.tick(t, "sale"); r.Reclaimed != 0 {
		t.Fatalf("a lost its slot within idle_after_s: %+v", r)
	}
	f.at(55 * time.Second)
	if ok, why := f.active(t, "sale", a.ID); ok || why != "idle" {
		t.Fatalf("a quiet: %v %q", ok, why)
	}
	r := f.tick(t, "sale")
	if r.Reclaimed != 1 || r.Idle != 1 || r.NoShows != 0 || len(r.Admitted) != 1 || r.Admitted[0] != b.ID {
		t.Fatalf("the idle slot did not go to b: %+v", r)
	}
	if v := f.verify(t, "sale", aTok); v.Valid || v.Reason != "idle" {
		t.Fatalf("an idle visitor's token: %+v", v)
	}
	// b keeps its slot while it keeps coming, a request every 20 s.
	b = f.status(t, "sale", b)
	bTok, err := f.line.Token(b)
	if err != nil {
		t.Fatal(err)
	}
	for at := 60 * time.Second; at <= 200*time.Second; at += 20 * time.Second {
		f.at(at)
		if v := f.verify(t, "sale", bTok); !v.Valid {
			t.Fatalf("b, busy, at %s: %+v", at, v)
		}
		if r := f.tick(t, "sale"); r.Reclaimed != 0 {
			t.Fatalf("b, busy, lost its slot at %s: %+v", at, r)
		}
	}
	st, err := f.store.Stats(context.Background(), "sale", f.clock.Now())
	if err != nil || st.IdleTotal != 1 || st.NoShowTotal != 0 {
		t.Fatalf("stats: %+v %v", st, err)
	}
}

// While arrivals cannot be seen (degraded mode: the gate lets tokens pass
// offline and records nothing), a slot falling due before its expiry gets
// a new deadline instead of going to the next in line.
func testLapsesWaitWhileArrivalsCannotBeSeen(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	s := f.room(t, "sale", func(s *queue.Settings) { s.Capacity, s.ArrivalWindowS, s.AbandonAfterS = 1, 60, 3600 })
	a, _ := f.admitted(t, "sale", "v:a")
	f.enter(t, "sale", "v:b")
	held := s
	queue.HoldLapses(&held)
	f.at(61 * time.Second)
	r, err := f.line.Tick(context.Background(), "sale", &held)
	if err != nil || r.Reclaimed != 0 || len(r.Admitted) != 0 {
		t.Fatalf("a held tick: %+v %v", r, err)
	}
	if ok, why := f.active(t, "sale", a.ID); !ok {
		t.Fatalf("a after a held tick: %q", why)
	}
	f.at(121*time.Second - time.Millisecond)
	if r := f.tick(t, "sale"); r.Reclaimed != 0 {
		t.Fatalf("a lapsed before its new deadline: %+v", r)
	}
	f.at(121 * time.Second)
	if r := f.tick(t, "sale"); r.NoShows != 1 || len(r.Admitted) != 1 {
		t.Fatalf("a at its new deadline: %+v", r)
	}
}

// testUnarrivedSlotsArePerNetwork: a client network holds at most
// unarrived_per_network admitted slots whose visitors have not arrived.
// Its further places keep their turn (and their place in line) while the
// admission passes over them, and are admitted as soon as one of the
// network's slots is used or its window ends. A farm behind one address
// that never comes to checkout holds two slots, not one per place it
// bought; a visitor from another network behind it in line goes first.
func testUnarrivedSlotsArePerNetwork(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	f.room(t, "sale", func(s *queue.Settings) {
		s.ArrivalWindowS, s.AbandonAfterS, s.BotProtection.UnarrivedPerNetwork = 60, 3600, 2
	})
	ctx := context.Background()
	enter := func(who, network string) queue.Ticket {
		t.Helper()
		tk, _, err := f.line.EnterWith(ctx, "sale", who, queue.EntryProof{Network: network})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	var farm []queue.Ticket
	for i := range 5 {
		farm = append(farm, enter(fmt.Sprintf("v:farm-%d", i), "127.0.0.2"))
	}
	// The fast track admits the network's first two, not its third.
	for i, tk := range farm {
		if want := i < 2; (tk.State == vocab.StateAdmitted) != want {
			t.Fatalf("farm place %d on entering: %s", i, tk.State)
		}
	}
	person := enter("v:person", "127.0.1.7")
	unknown := enter("v:unknown", "") // no network known: no limit
	r := f.tick(t, "sale")
	if len(r.Admitted) != 2 || r.Admitted[0] != person.ID || r.Admitted[1] != unknown.ID {
		t.Fatalf("the tick should pass over the farm's waiting places: admitted %v, person %s, unknown %s", r.Admitted, person.ID, unknown.ID)
	}
	// Passed over, not moved: the farm's third place is still first in line.
	if got := f.status(t, "sale", farm[2]); got.State != vocab.StateWaiting || got.Position != 1 {
		t.Fatalf("a passed-over place: %s at %d", got.State, got.Position)
	}
	if r := f.tick(t, "sale"); len(r.Admitted) != 0 {
		t.Fatalf("admitted while the network holds two unarrived slots: %v", r.Admitted)
	}
	// The farm's first place arrives at checkout: its next place goes in.
	f.at(10 * time.Second)
	tok, err := f.line.Token(f.status(t, "sale", farm[0]))
	if err != nil {
		t.Fatal(err)
	}
	if v := f.verify(t, "sale", tok); !v.Valid {
		t.Fatalf("farm place 0 arriving: %+v", v)
	}
	if r := f.tick(t, "sale"); len(r.Admitted) != 1 || r.Admitted[0] != farm[2].ID {
		t.Fatalf("after an arrival: admitted %v, want farm place 2", r.Admitted)
	}
	// The second never comes: when its window ends, the fourth goes in
	// (with the person's and the unknown's slots, no-shows too).
	f.at(60*time.Second - time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 0 {
		t.Fatalf("within the windows: admitted %v", r.Admitted)
	}
	f.at(60 * time.Second)
	if r := f.tick(t, "sale"); r.NoShows != 3 || len(r.Admitted) != 1 || r.Admitted[0] != farm[3].ID {
		t.Fatalf("after farm place 1's window: %+v, want farm place 3 admitted", r)
	}
	if got := f.status(t, "sale", farm[4]); got.State != vocab.StateWaiting || got.Position != 1 {
		t.Fatalf("the farm's last place: %s at %d", got.State, got.Position)
	}

	// Drawn places keep their network: after a scheduled opening the farm
	// has one slot at a time (limit 1), the person theirs.
	opens := f.clock.Now().Add(time.Minute)
	f.room(t, "drop", func(s *queue.Settings) {
		s.OpensAt = &opens
		s.BatchSize, s.ArrivalWindowS, s.AbandonAfterS, s.BotProtection.UnarrivedPerNetwork = 10, 60, 3600, 1
	})
	for i := range 3 {
		if tk, _, err := f.line.EnterWith(ctx, "drop", fmt.Sprintf("v:d-%d", i), queue.EntryProof{Network: "127.0.0.2"}); err != nil || tk.State != vocab.StateScheduled {
			t.Fatalf("farm place %d before the opening: %s %v", i, tk.State, err)
		}
	}
	if _, _, err := f.line.EnterWith(ctx, "drop", "v:d-person", queue.EntryProof{Network: "127.0.1.8"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	admitted := len(f.tick(t, "drop").Admitted) // the draw, then the admission
	for range 3 {
		admitted += len(f.tick(t, "drop").Admitted)
	}
	if admitted != 2 {
		t.Fatalf("after the draw %d admitted, want 2: one of the farm's three and the person", admitted)
	}

	// Off (0), or with arrivals not seen (arrival_window_s 0): first come,
	// first served, whatever the network.
	for _, edit := range []func(*queue.Settings){
		func(s *queue.Settings) { s.BotProtection.UnarrivedPerNetwork = 0 },
		func(s *queue.Settings) { s.ArrivalWindowS = 0 },
	} {
		f.room(t, "open", func(s *queue.Settings) { s.AbandonAfterS = 3600; edit(s) })
		for i := range 4 {
			tk, _, err := f.line.EnterWith(ctx, "open", fmt.Sprintf("v:o-%d", i), queue.EntryProof{Network: "127.0.0.2"})
			if err != nil || tk.State != vocab.StateAdmitted {
				t.Fatalf("no limit, place %d: %s %v", i, tk.State, err)
			}
		}
		if err := f.store.DeleteRoom(ctx, "open"); err != nil {
			t.Fatal(err)
		}
	}
}
