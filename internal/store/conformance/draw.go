package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// The scheduled opening: a pre-queue before opens_at, one random draw at
// it, latecomers first come first served behind the draw.

// opening is a room that opens a minute after t0, one admission per tick.
func opening(s *queue.Settings) {
	at := t0.Add(time.Minute)
	s.OpensAt, s.BatchSize, s.Capacity = &at, 1, 1000
}

// drawnOrder reads every ticket and returns their ids by position, failing
// unless the positions are exactly 1..len(tickets) and each entry position
// is the drawn place (ahead admitted since).
func drawnOrder(t *testing.T, f *fixture, room string, tickets []queue.Ticket, ahead int64) []string {
	t.Helper()
	order := make([]string, len(tickets))
	for _, tk := range tickets {
		got := f.status(t, room, tk)
		if got.State != vocab.StateWaiting || got.Position < 1 || got.Position > int64(len(tickets)) {
			t.Fatalf("%s after the draw: %s at %d, want waiting at 1..%d", tk.Identity, got.State, got.Position, len(tickets))
		}
		if order[got.Position-1] != "" {
			t.Fatalf("position %d given twice", got.Position)
		}
		if got.EntryPosition != got.Position+ahead {
			t.Fatalf("%s: entry position %d, want its drawn place %d", tk.Identity, got.EntryPosition, got.Position+ahead)
		}
		order[got.Position-1] = tk.ID
	}
	return order
}

func testScheduledEntriesWaitForTheDraw(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", opening)
	var early []queue.Ticket
	for i := 0; i < 6; i++ {
		tk := f.enter(t, "sale", fmt.Sprintf("v:early-%d", i))
		if tk.State != vocab.StateScheduled || tk.Position != 0 {
			t.Fatalf("before the opening: %s at %d, want scheduled with no position", tk.State, tk.Position)
		}
		early = append(early, tk)
	}
	if again := f.enter(t, "sale", "v:early-0"); again.ID != early[0].ID || again.State != vocab.StateScheduled {
		t.Fatalf("second tab before the opening: %+v", again)
	}
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 0 {
		t.Fatalf("tick before the opening admitted %v", r.Admitted)
	}
	if _, ok, err := f.line.LastDraw(context.Background(), "sale"); err != nil || ok {
		t.Fatalf("a draw before the opening: %v %v", ok, err)
	}
	st, err := f.line.Stats(context.Background(), "sale", f.clock.Now())
	if err != nil || st.Scheduled != 6 || st.Waiting != 0 {
		t.Fatalf("stats before the opening: %+v %v", st, err)
	}

	f.clock.Advance(time.Minute)
	if r := f.tick(t, "sale"); len(r.Admitted) != 1 {
		t.Fatalf("first tick after the opening admitted %v, want the first drawn", r.Admitted)
	}
	// Positions after the first admission: the five left hold 1..5.
	rest := early[:0:0]
	var first string
	for _, tk := range early {
		if got := f.status(t, "sale", tk); got.State == vocab.StateAdmitted {
			first = tk.ID
		} else {
			rest = append(rest, tk)
		}
	}
	order := append([]string{first}, drawnOrder(t, f, "sale", rest, 1)...)
	rec, ok, err := f.line.LastDraw(context.Background(), "sale")
	if err != nil || !ok {
		t.Fatalf("no draw record: %v", err)
	}
	if rec.Drawn != 6 || !rec.OpensAt.Equal(t0.Add(time.Minute)) || rec.At.Before(rec.OpensAt) || rec.Server == "" {
		t.Fatalf("draw record %+v", rec)
	}
	if rec.OrderHash != queue.OrderHash(order) {
		t.Fatalf("record's hash %s is not the hash of the order the line holds", rec.OrderHash)
	}
	if st, _ := f.line.Stats(context.Background(), "sale", f.clock.Now()); st.Scheduled != 0 || st.Waiting != 5 {
		t.Fatalf("stats after the draw: %+v", st)
	}
}

func testLatecomersQueueBehindTheDraw(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { opening(s); s.Paused = true })
	var early []queue.Ticket
	for i := 0; i < 5; i++ {
		early = append(early, f.enter(t, "sale", fmt.Sprintf("v:early-%d", i)))
	}
	f.clock.Advance(time.Minute)
	// After the opening, before any tick drew: behind the draw, not in it.
	before := f.enter(t, "sale", "v:before-the-draw")
	if before.State != vocab.StateWaiting {
		t.Fatalf("newcomer after the opening, before the draw: %s", before.State)
	}
	f.tick(t, "sale")
	var late []queue.Ticket
	for i := 0; i < 3; i++ {
		late = append(late, f.enter(t, "sale", fmt.Sprintf("v:late-%d", i)))
	}
	drawnOrder(t, f, "sale", early, 0)
	for i, tk := range append([]queue.Ticket{before}, late...) {
		if got := f.status(t, "sale", tk); got.State != vocab.StateWaiting || got.Position != int64(len(early)+1+i) {
			t.Fatalf("latecomer %s: %s at %d, want waiting at %d", tk.Identity, got.State, got.Position, len(early)+1+i)
		}
	}
	// Admission follows: every drawn one before any latecomer.
	s := f.room(t, "sale", opening)
	seen := 0
	for seen < len(early)+len(late)+1 {
		f.clock.Advance(time.Duration(s.BatchIntervalMS) * time.Millisecond)
		for _, id := range f.tick(t, "sale").Admitted {
			isEarly := false
			for _, tk := range early {
				isEarly = isEarly || tk.ID == id
			}
			if isEarly != (seen < len(early)) {
				t.Fatalf("admission %d was %s: drawn ones must all come first", seen, id)
			}
			seen++
		}
	}
}

func testLateScheduledEntryJoinsTheBack(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	s := f.room(t, "sale", func(s *queue.Settings) { opening(s); s.Paused = true })
	a := f.enter(t, "sale", "v:a")
	f.clock.Advance(time.Minute)
	f.tick(t, "sale")
	b := f.enter(t, "sale", "v:b")
	// A server whose settings were stale still put c in the pre-queue.
	c, err := f.store.Enter(context.Background(), "sale", &s, queue.AdmitScheduled, "v:c", "c0ffee", f.clock.Now(), 0, queue.EntryProof{})
	if err != nil || c.State != vocab.StateScheduled {
		t.Fatalf("stale enter: %+v %v", c, err)
	}
	d := f.enter(t, "sale", "v:d")
	f.clock.Advance(200 * time.Millisecond)
	f.tick(t, "sale")
	// The store's order: the line shows d no higher than it told it before
	// the straggler joined (queue/places.go).
	for want, tk := range []queue.Ticket{a, b, c, d} {
		got, err := f.store.Status(context.Background(), "sale", &s, tk.ID, tk.Identity, f.clock.Now())
		if err != nil || got.State != vocab.StateWaiting || got.Position != int64(want+1) {
			t.Fatalf("%s: %s at %d, want waiting at %d (late entries by arrival)", tk.Identity, got.State, got.Position, want+1)
		}
	}
	if rec, _, _ := f.line.LastDraw(context.Background(), "sale"); rec.Drawn != 1 {
		t.Fatalf("late entry changed the record: %+v", rec)
	}
}

func testLeavingThePreQueue(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { opening(s); s.Paused = true })
	a := f.enter(t, "sale", "v:a")
	b := f.enter(t, "sale", "v:b")
	if err := f.line.Leave(context.Background(), "sale", a.ID, a.Identity); err != nil {
		t.Fatal(err)
	}
	if got := f.status(t, "sale", a); got.State != vocab.StateExpired || got.Reason != "left" {
		t.Fatalf("left the pre-queue: %s %s", got.State, got.Reason)
	}
	if again := f.enter(t, "sale", "v:a"); again.ID == a.ID || again.State != vocab.StateScheduled {
		t.Fatalf("back after leaving: %+v", again)
	}
	f.clock.Advance(time.Minute)
	f.tick(t, "sale")
	if rec, _, _ := f.line.LastDraw(context.Background(), "sale"); rec.Drawn != 2 {
		t.Fatalf("drawn %d, want b and a's new ticket", rec.Drawn)
	}
	if got := f.status(t, "sale", b); got.State != vocab.StateWaiting {
		t.Fatalf("b after the draw: %s", got.State)
	}
}

// testDrawTakesOnePlaceANetworkARound: the store keeps each pre-queue
// place's network until the draw, so the draw can take one place a network
// a round: a network holding twenty places (a bot farm behind one address)
// has one of the first six drawn places, the five single visitors the other
// five. A place that left the pre-queue is not listed; one with no network
// known is a network of its own.
func testDrawTakesOnePlaceANetworkARound(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { opening(s); s.Paused = true })
	enter := func(who, network string) queue.Ticket {
		t.Helper()
		tk, _, err := f.line.EnterWith(context.Background(), "sale", who, queue.EntryProof{Network: network})
		if err != nil || tk.State != vocab.StateScheduled {
			t.Fatalf("%s before the opening: %+v %v", who, tk, err)
		}
		return tk
	}
	farm := map[string]bool{}
	var all []queue.Ticket
	for i := 0; i < 20; i++ {
		tk := enter(fmt.Sprintf("v:farm-%02d", i), "127.0.0.2")
		farm[tk.ID] = true
		all = append(all, tk)
	}
	for i := 0; i < 4; i++ {
		all = append(all, enter(fmt.Sprintf("v:person-%d", i), fmt.Sprintf("127.0.1.%d", i)))
	}
	all = append(all, enter("v:unknown", ""))
	gone := enter("v:gone", "127.0.9.9")
	if err := f.line.Leave(context.Background(), "sale", gone.ID, gone.Identity); err != nil {
		t.Fatal(err)
	}

	places, err := f.store.PreQueue(context.Background(), "sale")
	if err != nil || len(places) != len(all) {
		t.Fatalf("pre-queue %v %v, want the %d places that did not leave", places, err, len(all))
	}
	for i, p := range places {
		want := map[bool]string{true: "127.0.0.2", false: ""}[farm[p.ID]]
		if i >= 20 && i < 24 {
			want = fmt.Sprintf("127.0.1.%d", i-20)
		}
		if p.ID != all[i].ID || p.Network != want {
			t.Fatalf("pre-queue place %d: %+v, want %s from %q", i, p, all[i].ID, want)
		}
	}

	f.clock.Advance(time.Minute)
	f.tick(t, "sale")
	order := drawnOrder(t, f, "sale", all, 0)
	fromFarm := 0
	for _, id := range order[:6] {
		if farm[id] {
			fromFarm++
		}
	}
	if fromFarm != 1 {
		t.Fatalf("the farm has %d of the first 6 drawn places, want 1 (one a network a round)", fromFarm)
	}
	for _, id := range order[6:] {
		if !farm[id] {
			t.Fatalf("%s drawn after the first round, where only the farm's places are left", id)
		}
	}
	if places, err := f.store.PreQueue(context.Background(), "sale"); err != nil || len(places) != 0 {
		t.Fatalf("pre-queue after the draw: %v %v", places, err)
	}
}

func testTwoServersDrawOnce(t *testing.T, target Open) {
	shared := target(t)
	f := newFixtureOn(t, shared, nil)
	s := f.room(t, "sale", func(s *queue.Settings) { opening(s); s.Paused = true })
	const n = 60
	var early []queue.Ticket
	for i := 0; i < n; i++ {
		early = append(early, f.enter(t, "sale", fmt.Sprintf("v:%02d", i)))
	}
	f.clock.Advance(time.Minute)
	names := []string{"server-a", "server-b"}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		line := queue.NewLine(shared(), f.keys, queue.LineOptions{Clock: f.clock, Server: name})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = line.Tick(context.Background(), "sale", &s)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	order := drawnOrder(t, f, "sale", early, 0)
	rec, ok, err := f.line.LastDraw(context.Background(), "sale")
	if err != nil || !ok || rec.Drawn != n || (rec.Server != names[0] && rec.Server != names[1]) {
		t.Fatalf("draw record %+v %v %v", rec, ok, err)
	}
	if rec.OrderHash != queue.OrderHash(order) {
		t.Fatal("the line's order is not the recorded draw's: drawn twice")
	}
	if st, _ := f.line.Stats(context.Background(), "sale", f.clock.Now()); st.Waiting != n || st.Scheduled != 0 {
		t.Fatalf("stats %+v, want %d waiting", st, n)
	}
	ids := append([]string(nil), order...)
	sort.Strings(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("%s twice in the line", ids[i])
		}
	}
}

func testDrawIsRefusedTwiceAndWhenStale(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { opening(s); s.Paused = true })
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, f.enter(t, "sale", fmt.Sprintf("v:%d", i)).ID)
	}
	ctx, opens, now := context.Background(), t0.Add(time.Minute), t0.Add(time.Minute)
	rec := func(order []string) queue.DrawRecord {
		return queue.DrawRecord{OpensAt: opens, At: now, Drawn: int64(len(order)), Server: "test", OrderHash: queue.OrderHash(order)}
	}
	// Not the pre-queue: one missing, one twice, one unknown. Nothing changes.
	for _, bad := range [][]string{ids[:3], {ids[0], ids[1], ids[2], ids[2]}, {ids[0], ids[1], ids[2], "f00d"}} {
		if drew, _, err := f.store.Draw(ctx, "sale", rec(bad), bad, now); !errors.Is(err, queue.ErrDrawStale) || drew {
			t.Fatalf("draw of %v: %v %v, want ErrDrawStale", bad, drew, err)
		}
	}
	if _, ok, _ := f.store.LastDraw(ctx, "sale"); ok {
		t.Fatal("a refused draw left a record")
	}
	order := []string{ids[2], ids[0], ids[3], ids[1]}
	if drew, _, err := f.store.Draw(ctx, "sale", rec(order), order, now); err != nil || !drew {
		t.Fatalf("draw: %v %v", drew, err)
	}
	// The same opening again, in another order (another server): a no-op.
	again := []string{ids[0], ids[1], ids[2], ids[3]}
	if drew, late, err := f.store.Draw(ctx, "sale", rec(again), again, now); err != nil || drew || late != 0 {
		t.Fatalf("second draw of the opening: %v %d %v, want a no-op", drew, late, err)
	}
	for i, id := range order {
		got, _, err := f.line.Status(ctx, "sale", id, fmt.Sprintf("v:%d", slices.Index(ids, id)))
		if err != nil || got.State != vocab.StateWaiting || got.Position != int64(i+1) {
			t.Fatalf("%s after the draw: %+v %v, want waiting at %d", id, got, err, i+1)
		}
	}
	if r, _, _ := f.store.LastDraw(ctx, "sale"); r.Drawn != 4 || r.OrderHash != queue.OrderHash(order) || !r.OpensAt.Equal(opens) {
		t.Fatalf("record %+v", r)
	}
}
