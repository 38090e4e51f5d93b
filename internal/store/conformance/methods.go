package conformance

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// Queueing methods, sold out and a full line.

// seededDraw is a reproducible draw source: the same seed gives the test
// the same draws the line used.
func seededDraw(seed uint64) func() uint64 {
	r := mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() uint64 { return r.Uint64N(queue.DrawRange) }
}

// lineWithDraws puts f's line on a new Line whose draws come from draw.
func (f *fixture) lineWithDraws(draw func() uint64) {
	f.line = queue.NewLine(f.store, f.keys, queue.LineOptions{
		Clock: f.clock, Jitter: func(max time.Duration) time.Duration { return max / 2 }, Draw: draw,
	})
}

func testRandomAdmitsByDraw(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	const seed = 20261201
	f.lineWithDraws(seededDraw(seed))
	s := f.room(t, "lottery", func(s *queue.Settings) {
		s.QueueingMethod = queue.MethodRandom
		s.BatchSize, s.Capacity, s.Paused = 10, 1000, true
	})
	var line []string // ticket ids in arrival order
	for i := 0; i < 100; i++ {
		line = append(line, f.enter(t, "lottery", fmt.Sprintf("v:%03d", i)).ID)
	}
	s.Paused = false
	f.room(t, "lottery", func(x *queue.Settings) { *x = s })
	f.clock.Advance(200 * time.Millisecond)
	r := f.tick(t, "lottery")

	// The k-th admission is the waiter at rank draw % waiting among those left.
	draw, left := seededDraw(seed), append([]string(nil), line...)
	var want []string
	for k := 0; k < 10; k++ {
		i := int(draw() % uint64(len(left)))
		want = append(want, left[i])
		left = append(left[:i], left[i+1:]...)
	}
	if fmt.Sprint(r.Admitted) != fmt.Sprint(want) {
		t.Fatalf("admitted %v, want the draws' picks %v", r.Admitted, want)
	}
	// Spread over the line, not its head: FIFO would admit ranks 0..9.
	rank := map[string]int{}
	for i, id := range line {
		rank[id] = i
	}
	back, beyondHead := 0, 0
	for _, id := range r.Admitted {
		if rank[id] >= 50 {
			back++
		}
		if rank[id] >= 10 {
			beyondHead++
		}
	}
	if back == 0 || beyondHead < 5 {
		t.Fatalf("admitted ranks %v: not spread over the line", ranksOf(r.Admitted, rank))
	}
	// Those not drawn keep waiting, and the pace and capacity hold as in FIFO.
	st, _ := f.store.Stats(context.Background(), "lottery", f.clock.Now())
	if st.Waiting != 90 || st.Active != 10 {
		t.Fatalf("after one draw: %d waiting, %d active; want 90 and 10", st.Waiting, st.Active)
	}
	if r := f.tick(t, "lottery"); len(r.Admitted) != 0 {
		t.Fatalf("same interval: a second draw admitted %v", r.Admitted)
	}
}

func ranksOf(ids []string, rank map[string]int) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = rank[id]
	}
	return out
}

// testRandomDrawIsUniform: over many one-slot draws from a line of 5, every
// rank is drawn about as often. The draws are seeded, so the counts are the
// same on every run and every backend: a store that maps a uniform draw to
// a rank unevenly fails every time, never by chance (with crypto draws,
// chi-square beyond 18.5 at 4 degrees of freedom came once in 1000 runs
// of a correct store).
func testRandomDrawIsUniform(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.lineWithDraws(seededDraw(20261205))
	f.room(t, "lottery", func(s *queue.Settings) {
		s.QueueingMethod, s.BatchSize, s.Capacity, s.SessionTTLS = queue.MethodRandom, 1, 1_000_000, 86_400
		s.Paused = true
	})
	const size, rounds = 5, 400
	counts := make([]int, size)
	for round := 0; round < rounds; round++ {
		var ids []string
		for i := 0; i < size; i++ {
			ids = append(ids, f.enter(t, "lottery", fmt.Sprintf("v:%d-%d", round, i)).ID)
		}
		s, _ := f.line.Settings(context.Background(), "lottery")
		s.Paused = false
		f.clock.Advance(200 * time.Millisecond)
		r, err := f.line.Tick(context.Background(), "lottery", &s)
		if err != nil || len(r.Admitted) != 1 {
			t.Fatalf("round %d: %v %v", round, r.Admitted, err)
		}
		for i, id := range ids {
			if id == r.Admitted[0] {
				counts[i]++
			}
		}
		// Clear the line for the next round: the rest leave.
		for i, id := range ids {
			if id != r.Admitted[0] {
				if err := f.line.Leave(context.Background(), "lottery", id, fmt.Sprintf("v:%d-%d", round, i)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	exp, chi := float64(rounds)/size, 0.0
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	if chi > 18.5 {
		t.Fatalf("ranks drawn %v: chi-square %.1f, not uniform", counts, chi)
	}
}

func testPassthroughAdmitsEveryoneAndCounts(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "open", func(s *queue.Settings) {
		s.QueueingMethod, s.Capacity, s.BatchSize = queue.MethodPassthrough, 5, 1
	})
	// Capacity is not a limit in passthrough: there is no line to hold
	// anyone in. It is still counted (active, admitted_total).
	var toks []string
	for i := 0; i < 12; i++ {
		tk := f.enter(t, "open", fmt.Sprintf("v:%d", i))
		if tk.State != vocab.StateAdmitted || tk.ExpiresAt.IsZero() {
			t.Fatalf("entry %d: %s", i, tk.State)
		}
		tok, err := f.line.Token(tk)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	f.clock.Advance(time.Second) // past the jitter
	for i, tok := range toks {
		if v, err := f.line.Verify(context.Background(), tok, "open"); err != nil || !v.Valid {
			t.Fatalf("entry %d token: %+v %v", i, v, err)
		}
	}
	st, _ := f.store.Stats(context.Background(), "open", f.clock.Now())
	if st.Active != 12 || st.AdmittedTotal != 12 || st.Waiting != 0 || st.EnteredTotal != 12 {
		t.Fatalf("stats %+v: want 12 active, admitted and entered, 0 waiting", st)
	}
}

func testRejectTurnsEveryoneAwayAndKeepsPlaces(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "shop", func(s *queue.Settings) { s.Paused = true })
	a := f.enter(t, "shop", "v:a")
	b := f.enter(t, "shop", "v:b")
	f.room(t, "shop", func(s *queue.Settings) { s.QueueingMethod = queue.MethodReject })
	n := f.enter(t, "shop", "v:new")
	if n.State != vocab.StateClosed || n.Reason != queue.ReasonMaintenance || n.ID != "" {
		t.Fatalf("newcomer while rejecting: %+v, want closed (maintenance) without a place", n)
	}
	if got := f.status(t, "shop", a); got.State != vocab.StateClosed || got.Reason != queue.ReasonMaintenance || got.Position != 0 {
		t.Fatalf("waiter while rejecting: %+v", got)
	}
	// Nobody is admitted or dropped while the room rejects, however long.
	for i := 0; i < 6; i++ {
		f.clock.Advance(10 * time.Second)
		if r := f.tick(t, "shop"); len(r.Admitted) != 0 || r.Abandoned != 0 {
			t.Fatalf("rejecting room ticked %+v", r)
		}
		f.status(t, "shop", a) // a's page stays open; b's was closed
	}
	f.room(t, "shop", nil)
	if got := f.status(t, "shop", a); got.State != vocab.StateWaiting || got.Position != 1 {
		t.Fatalf("a back in FIFO: %+v, want waiting at 1", got)
	}
	f.clock.Advance(200 * time.Millisecond)
	r := f.tick(t, "shop")
	if len(r.Admitted) != 1 || r.Admitted[0] != a.ID || r.Abandoned != 1 {
		t.Fatalf("first tick after reject: %+v; want a admitted, b (page closed) dropped", r)
	}
	if got := f.status(t, "shop", b); got.State != vocab.StateExpired {
		t.Fatalf("b: %+v", got)
	}
	st, _ := f.store.Stats(context.Background(), "shop", f.clock.Now())
	if st.EnteredTotal != 2 {
		t.Fatalf("entered_total %d: the rejected newcomer took a place", st.EnteredTotal)
	}
}

func testSoldOutFreezesTheLineAndUndoPutsItBack(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "drop", func(s *queue.Settings) { s.BatchSize = 1 })
	in := f.enter(t, "drop", "v:in") // fast-tracked
	if in.State != vocab.StateAdmitted {
		t.Fatalf("first: %s", in.State)
	}
	tok, err := f.line.Token(in)
	if err != nil {
		t.Fatal(err)
	}
	var waiters []queue.Ticket
	for i := 0; i < 3; i++ {
		waiters = append(waiters, f.enter(t, "drop", fmt.Sprintf("v:w%d", i)))
	}
	f.room(t, "drop", func(s *queue.Settings) { s.BatchSize = 1; s.SoldOut = true; s.SoldOutMessage = queue.Text("All gone") })

	n := f.enter(t, "drop", "v:late")
	if n.State != vocab.StateSoldOut || n.ID != "" {
		t.Fatalf("newcomer after sold out: %+v, want sold_out without a place", n)
	}
	for _, w := range waiters {
		if got := f.status(t, "drop", w); got.State != vocab.StateSoldOut || got.Position != 0 {
			t.Fatalf("waiter after sold out: %+v", got)
		}
	}
	if again := f.enter(t, "drop", "v:w1"); again.State != vocab.StateSoldOut || again.ID != waiters[1].ID {
		t.Fatalf("a waiter entering again: %+v, want its own ticket, sold out", again)
	}
	for i := 0; i < 6; i++ { // a minute: nobody admitted, nobody dropped
		f.clock.Advance(10 * time.Second)
		if r := f.tick(t, "drop"); len(r.Admitted) != 0 || r.Abandoned != 0 {
			t.Fatalf("sold out room ticked %+v", r)
		}
		for _, w := range waiters {
			f.status(t, "drop", w) // open sold-out pages are still a sign of life
		}
	}
	// The admitted visitor's token still verifies until it expires.
	if v, err := f.line.Verify(context.Background(), tok, "drop"); err != nil || !v.Valid {
		t.Fatalf("admitted token after sold out: %+v %v", v, err)
	}
	f.room(t, "drop", func(s *queue.Settings) { s.BatchSize = 1 })
	for i, w := range waiters {
		if got := f.status(t, "drop", w); got.State != vocab.StateWaiting || got.Position != int64(i+1) {
			t.Fatalf("waiter %d after undo: %s at %d, want waiting at %d", i, got.State, got.Position, i+1)
		}
	}
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "drop"); len(r.Admitted) != 1 || r.Admitted[0] != waiters[0].ID {
		t.Fatalf("after undo admitted %v, want the head", r.Admitted)
	}
	st, _ := f.store.Stats(context.Background(), "drop", f.clock.Now())
	if st.EnteredTotal != 4 {
		t.Fatalf("entered_total %d: the newcomer during sold out took a place", st.EnteredTotal)
	}
}

func testLineFullAtExactlyMaxWaiting(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "small", func(s *queue.Settings) { s.Paused = true; s.MaxWaiting = 5 })
	var in []queue.Ticket
	for i := 0; i < 5; i++ {
		tk := f.enter(t, "small", fmt.Sprintf("v:%d", i))
		if tk.State != vocab.StateWaiting || tk.Position != int64(i+1) {
			t.Fatalf("entry %d of 5: %+v", i, tk)
		}
		in = append(in, tk)
	}
	full := f.enter(t, "small", "v:sixth")
	if full.State != vocab.StateFull || full.ID != "" || full.Position != 0 {
		t.Fatalf("sixth: %+v, want full without a place", full)
	}
	if again := f.enter(t, "small", "v:2"); again.ID != in[2].ID || again.Position != 3 {
		t.Fatalf("someone in line entering again: %+v, want its place", again)
	}
	if err := f.line.Leave(context.Background(), "small", in[0].ID, "v:0"); err != nil {
		t.Fatal(err)
	}
	if tk := f.enter(t, "small", "v:sixth"); tk.State != vocab.StateWaiting || tk.Position != 5 {
		t.Fatalf("after one left: %+v, want the last place", tk)
	}
	if tk := f.enter(t, "small", "v:seventh"); tk.State != vocab.StateFull {
		t.Fatalf("seventh: %s", tk.State)
	}
	st, _ := f.store.Stats(context.Background(), "small", f.clock.Now())
	if st.Waiting != 5 || st.EnteredTotal != 6 {
		t.Fatalf("stats %+v: want 5 waiting, 6 entered", st)
	}
	// Without a line (passthrough) there is nothing to be full.
	f.room(t, "small", func(s *queue.Settings) { s.MaxWaiting = 5; s.QueueingMethod = queue.MethodPassthrough })
	if tk := f.enter(t, "small", "v:eighth"); tk.State != vocab.StateAdmitted {
		t.Fatalf("passthrough with a full line: %s", tk.State)
	}
}

func testLineFullHoldsAcrossServers(t *testing.T, target Open) {
	shared := target(t)
	a := newFixtureOn(t, shared, nil)
	b := newFixtureOn(t, shared, nil)
	const max, n = 40, 200
	a.room(t, "small", func(s *queue.Settings) { s.Paused = true; s.MaxWaiting = max })
	states := make([]queue.State, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		f := a
		if i%2 == 1 {
			f = b
		}
		wg.Add(1)
		go func(i int, f *fixture) {
			defer wg.Done()
			tk, _, err := f.line.Enter(context.Background(), "small", fmt.Sprintf("v:%03d", i))
			states[i] = tk.State
			errs <- err
		}(i, f)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	count := map[queue.State]int{}
	for _, s := range states {
		count[s]++
	}
	if count[vocab.StateWaiting] != max || count[vocab.StateFull] != n-max {
		t.Fatalf("%d entries on two servers: %v, want %d waiting and the rest full", n, count, max)
	}
	st, _ := a.store.Stats(context.Background(), "small", a.clock.Now())
	if st.Waiting != max {
		t.Fatalf("%d waiting, want exactly %d", st.Waiting, max)
	}
}
