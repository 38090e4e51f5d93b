package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/positions"
)

// The change log (queue.Changes): a server that follows it knows every
// position without reading tickets, and the positions equal the store's.

// catchUp applies every entry the log has to v, failing on a gap.
func catchUp(t *testing.T, v *queue.RoomView) {
	t.Helper()
	for {
		n, err := v.Step(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Synced() {
			t.Fatal("the view lost the log: a gap in the entries' numbers")
		}
		if n == 0 {
			return
		}
	}
}

// comparePositions reads every ticket with StatusMany and fails unless each
// waiter's local position (from its score) is the store's, and the number
// waiting is the same. It returns the waiters' positions by ticket id.
func comparePositions(t *testing.T, f *fixture, room string, ids []string, views ...*queue.RoomView) map[string]int64 {
	t.Helper()
	ts, _, err := f.line.StatusMany(context.Background(), room, ids)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.store.Stats(context.Background(), room, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, v := range views {
		if got := v.Waiting(); got != st.Waiting {
			t.Fatalf("view: %d waiting, store %d", got, st.Waiting)
		}
	}
	for _, tk := range ts {
		if tk.State != vocab.StateWaiting {
			continue
		}
		out[tk.ID] = tk.Position
		for _, v := range views {
			pos, waiting, ok := v.Position(tk.Score)
			if !ok || pos != tk.Position || waiting != st.Waiting {
				t.Fatalf("ticket %s (score %v): view says %d of %d (ok %v), store %d of %d",
					tk.ID, tk.Score, pos, waiting, ok, tk.Position, st.Waiting)
			}
		}
	}
	return out
}

// testLogPositionsMatchTheStore: random enters, leaves, ticks (FIFO and a
// random line), abandonment and a scheduled opening's draw; after each step
// a follower on another server gives every waiter the store's position, and
// between draws no position goes up.
func testLogPositionsMatchTheStore(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.lineWithDraws(seededDraw(7))
	opens := t0.Add(30 * time.Second)
	f.room(t, "sale", func(s *queue.Settings) {
		s.OpensAt, s.BatchSize, s.Capacity, s.AbandonAfterS = &opens, 3, 100000, 20
	})
	other := f.server() // the follower's server
	v := queue.NewRoomView(other, "sale")
	if err := v.Resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var ids []string
	live := map[string]queue.Ticket{}
	last := map[string]int64{}
	drawn := false
	for step := range 120 {
		switch k := r.IntN(10); {
		case k < 5:
			tk := f.enter(t, "sale", fmt.Sprintf("v:%d", step))
			ids = append(ids, tk.ID)
			live[tk.ID] = tk
		case k < 7 && len(ids) > 0:
			id := ids[r.IntN(len(ids))]
			if tk, ok := live[id]; ok {
				_ = f.line.Leave(context.Background(), "sale", id, tk.Identity)
				delete(live, id)
			}
		default:
			f.clock.Advance(time.Duration(r.IntN(4000)) * time.Millisecond)
			f.tick(t, "sale")
		}
		if step == 60 {
			// From here on a random line: admissions from anywhere in it.
			f.room(t, "sale", func(s *queue.Settings) {
				s.OpensAt, s.BatchSize, s.Capacity, s.AbandonAfterS = &opens, 3, 100000, 20
				s.QueueingMethod = queue.MethodRandom
			})
		}
		if !drawn && !f.clock.Now().Before(opens) {
			drawn = true
			clear(last) // the draw puts the pre-queue ahead of everyone
		}
		catchUp(t, v)
		now := comparePositions(t, f, "sale", ids, v)
		for id, p := range now {
			if before, ok := last[id]; ok && p > before {
				t.Fatalf("step %d: %s went up from %d to %d", step, id, before, p)
			}
		}
		last = now
		// Keep half the waiters alive so abandonment happens to the rest.
		for i, id := range ids {
			if i%2 == 0 {
				if err := f.store.Alive(context.Background(), "sale", []string{id}, f.clock.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if !drawn {
		t.Fatal("the opening was never drawn")
	}
	// A second follower that starts now reads the same line from a snapshot.
	w := queue.NewRoomView(other, "sale")
	if err := w.Resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	comparePositions(t, f, "sale", ids, v, w)
}

// testLogSnapshotWhileTheLineMoves: a snapshot read in small chunks while
// waiters enter, leave and are admitted, then the entries after the head
// taken before it, is the line.
func testLogSnapshotWhileTheLineMoves(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize, s.Capacity = 2, 100000 })
	ctx := context.Background()
	var tickets []queue.Ticket
	churn := func(i int) {
		enters := 3
		if i >= 10 {
			enters = 1 // while the snapshot reads: the line shrinks, so the reading ends
		}
		for j := range enters {
			tickets = append(tickets, f.enter(t, "sale", fmt.Sprintf("v:%d-%d", i, j)))
		}
		tk := tickets[(i*7)%len(tickets)]
		_ = f.line.Leave(ctx, "sale", tk.ID, tk.Identity)
		f.clock.Advance(250 * time.Millisecond)
		f.tick(t, "sale")
	}
	for i := range 10 {
		churn(i)
	}
	head, err := f.store.LogHead(ctx, "sale")
	if err != nil {
		t.Fatal(err)
	}
	var snap []float64
	var after *float64
	for i := 10; i < 1000; i++ {
		churn(i) // the line moves between every chunk
		part, err := f.store.LineScores(ctx, "sale", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		snap = append(snap, part...)
		if len(part) < 3 {
			break
		}
		x := part[len(part)-1]
		after = &x
	}
	var set positions.Set
	set.Reset(snap)
	es, err := f.store.ReadLog(ctx, "sale", head, 100000, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := head.N
	for _, e := range es {
		if e.N != n+1 {
			t.Fatalf("entry %d after %d", e.N, n)
		}
		n = e.N
		for _, x := range e.Add {
			set.Add(x)
		}
		for _, x := range e.Del {
			set.Remove(x)
		}
	}
	truth, err := f.store.LineScores(ctx, "sale", nil, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != len(truth) {
		t.Fatalf("snapshot + log: %d waiting, the line %d", set.Len(), len(truth))
	}
	for i, x := range truth {
		if set.Below(x) != i || !set.Has(x) {
			t.Fatalf("score %v: %d below it, the line %d", x, set.Below(x), i)
		}
	}
}

// testLogEntriesAreOnePerOperation: one entry per call that changed the
// line (a tick admitting many is one entry), none for calls that did not,
// each with the scores it moved.
func testLogEntriesAreOnePerOperation(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize, s.Capacity = 5, 100000 })
	ctx := context.Background()
	f.blockFastTrack(t, "sale")
	head, _ := f.store.LogHead(ctx, "sale")
	var in []queue.Ticket
	for i := range 7 {
		in = append(in, f.enter(t, "sale", fmt.Sprintf("v:%d", i)))
	}
	f.status(t, "sale", in[0]) // a read changes nothing
	if err := f.line.Leave(ctx, "sale", in[1].ID, in[1].Identity); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	if r := f.tick(t, "sale"); len(r.Admitted) != 5 {
		t.Fatalf("admitted %d, want 5", len(r.Admitted))
	}
	es, err := f.store.ReadLog(ctx, "sale", head, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 9 {
		t.Fatalf("%d entries after 7 enters, a leave and a tick, want 9: %+v", len(es), es)
	}
	for i, e := range es {
		if e.N != head.N+int64(i)+1 {
			t.Fatalf("entry %d numbered %d after %d", i, e.N, head.N)
		}
		if i < 7 && (len(e.Add) != 1 || e.Add[0] != float64(in[i].Seq) || len(e.Del) != 0) {
			t.Fatalf("enter entry %+v, want seq %d added", e, in[i].Seq)
		}
	}
	if fmt.Sprint(es[7].Add, es[7].Del) != fmt.Sprint([]float64(nil), []float64{float64(in[1].Seq)}) {
		t.Fatalf("leave entry %+v: want seq %d removed", es[7], in[1].Seq)
	}
	want := []float64{float64(in[0].Seq), float64(in[2].Seq), float64(in[3].Seq), float64(in[4].Seq), float64(in[5].Seq)}
	if fmt.Sprint(es[8].Add, es[8].Del) != fmt.Sprint([]float64(nil), want) {
		t.Fatalf("tick entry %+v: want the admitted scores %v removed", es[8], want)
	}
	last := es[8]
	got, _ := f.store.LogHead(ctx, "sale")
	if got != last.LogPos {
		t.Fatalf("head %+v, want the last entry %+v", got, last.LogPos)
	}
	// A blocking read with nothing new ends after its wait, empty.
	if es, err := f.store.ReadLog(ctx, "sale", got, 10, 50*time.Millisecond); err != nil || len(es) != 0 {
		t.Fatalf("read past the head: %v, %v", es, err)
	}
}

// testLogGapAfterTheRoomIsDeleted: a follower of a deleted room sees that
// its place is gone, from the head and from the next entry's number.
func testLogGapAfterTheRoomIsDeleted(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	ctx := context.Background()
	f.blockFastTrack(t, "sale")
	f.enter(t, "sale", "v:old")
	v := queue.NewRoomView(f.server(), "sale")
	if err := v.Resync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.line.DeleteRoom(ctx, "sale"); err != nil {
		t.Fatal(err)
	}
	if err := v.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if v.Synced() {
		t.Fatal("still synced after the room was deleted")
	}
	if err := v.Resync(ctx); err != nil || v.Waiting() != 0 {
		t.Fatalf("resync of the deleted room: %d waiting, %v", v.Waiting(), err)
	}
	f.room(t, "sale", nil)
	f.blockFastTrack(t, "sale")
	f.enter(t, "sale", "v:new")
	v2 := queue.NewRoomView(f.server(), "sale")
	v2.Resync(ctx)
	// v followed the empty room from before; v2 catches the numbering again.
	if _, err := v.Step(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if v.Synced() && v.Waiting() != v2.Waiting() {
		t.Fatalf("view %d waiting, the line %d", v.Waiting(), v2.Waiting())
	}
}

// testAbandonSweepReachesALongLine: in a line longer than one tick's sweep
// (queue.SweepKeep, queue.MaxScan), the silent waiters anywhere in it are dropped within a
// sweep of the line (a few ticks), never before abandon_after_s, and a
// waiter with a sign of life (Alive) never.
func testAbandonSweepReachesALongLine(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "long", func(s *queue.Settings) { s.AbandonAfterS = 30; s.Paused = true })
	ctx := context.Background()
	const n = 2*queue.MaxScan + 200
	var open []string
	silent := map[string]bool{}
	for i := range n {
		tk := f.enter(t, "long", fmt.Sprintf("v:%d", i))
		if i%3 == 0 {
			open = append(open, tk.ID)
		} else {
			silent[tk.ID] = true
		}
	}
	f.clock.Advance(20 * time.Second)
	if err := f.store.Alive(ctx, "long", open, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	// 29 s of silence: a full sweep of the line drops nobody.
	f.clock.Advance(9 * time.Second)
	for range 4 {
		if r := f.tick(t, "long"); r.Abandoned != 0 {
			t.Fatalf("%d dropped before abandon_after_s", r.Abandoned)
		}
	}
	// 31 s: the silent go within a sweep of the line (a tick looks at
	// SweepKeep waiters that stay, besides those it drops; one more for the
	// cursor's start), at most MaxScan a tick.
	f.clock.Advance(2 * time.Second)
	var dropped int64
	for range len(open)/queue.SweepKeep + 2 {
		r := f.tick(t, "long")
		if r.Abandoned > queue.MaxScan {
			t.Fatalf("one tick dropped %d", r.Abandoned)
		}
		dropped += r.Abandoned
	}
	if dropped != int64(len(silent)) {
		t.Fatalf("dropped %d of %d silent waiters", dropped, len(silent))
	}
	st, _ := f.store.Stats(ctx, "long", f.clock.Now())
	if st.Waiting != int64(len(open)) {
		t.Fatalf("%d waiting, want the %d with a sign of life", st.Waiting, len(open))
	}
	many, err := f.store.StatusMany(ctx, "long", nil, open, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range many {
		if tk.State != vocab.StateWaiting {
			t.Fatalf("a waiter with a sign of life: %s (%s)", tk.State, tk.Reason)
		}
	}
}

// testAliveKeepsOpenWaitersFromAbandon: Alive is a sign of life for many
// waiters in one call; it never brings back a ticket that left the line.
func testAliveKeepsOpenWaitersFromAbandon(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.AbandonAfterS = 30; s.Paused = true })
	ctx := context.Background()
	open1 := f.enter(t, "sale", "v:open1")
	open2 := f.enter(t, "sale", "v:open2")
	closed := f.enter(t, "sale", "v:closed")
	gone := f.enter(t, "sale", "v:gone")
	if err := f.line.Leave(ctx, "sale", gone.ID, gone.Identity); err != nil {
		t.Fatal(err)
	}
	for range 6 { // 60 s, no status read by anyone
		f.clock.Advance(10 * time.Second)
		if err := f.store.Alive(ctx, "sale", []string{open1.ID, open2.ID, gone.ID}, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		f.tick(t, "sale")
	}
	for _, tk := range []queue.Ticket{open1, open2} {
		if got := f.status(t, "sale", tk); got.State != vocab.StateWaiting {
			t.Fatalf("%s with an open connection: %s (%s)", tk.Identity, got.State, got.Reason)
		}
	}
	if got := f.status(t, "sale", closed); got.State != vocab.StateExpired || got.Reason != "abandoned" {
		t.Fatalf("closed connection: %s (%s), want abandoned", got.State, got.Reason)
	}
	if got := f.status(t, "sale", gone); got.Reason != "left" {
		t.Fatalf("left ticket after Alive: %s (%s), want still left", got.State, got.Reason)
	}
	st, _ := f.store.Stats(ctx, "sale", f.clock.Now())
	if st.Waiting != 2 || st.AbandonedTotal != 1 {
		t.Fatalf("waiting %d, abandoned %d; want 2 and 1", st.Waiting, st.AbandonedTotal)
	}
	if rate, err := f.store.Rate(ctx, "sale"); err != nil || rate != f.status(t, "sale", open1).Rate {
		t.Fatalf("rate %v (%v), want the status's", rate, err)
	}
}

// testStatusGivesTheWaitersScore: the one-ticket read (a push connection's
// first message) gives a waiter's score as the batched read does, so the
// server can answer its later updates from the change log without reading
// it again; the view puts that score at the store's position.
func testStatusGivesTheWaitersScore(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.Paused = true })
	ctx := context.Background()
	var ids []string
	var tks []queue.Ticket
	for i := range 3 {
		tk := f.enter(t, "sale", fmt.Sprintf("v:score-%d", i))
		ids, tks = append(ids, tk.ID), append(tks, tk)
	}
	v := queue.NewRoomView(f.store, "sale")
	if err := v.Resync(ctx); err != nil {
		t.Fatal(err)
	}
	many, _, err := f.line.StatusMany(ctx, "sale", ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range tks {
		one := f.status(t, "sale", tk)
		if one.State != vocab.StateWaiting || one.Score != many[i].Score {
			t.Fatalf("%s: Status gives %s score %v, StatusMany score %v", tk.Identity, one.State, one.Score, many[i].Score)
		}
		if pos, _, ok := v.Position(one.Score); !ok || pos != one.Position || pos != int64(i+1) {
			t.Fatalf("%s: view gives %d (ok %v) for score %v, store %d", tk.Identity, pos, ok, one.Score, one.Position)
		}
	}
}

// testPresentKeepsOpenWaitersFromAbandon: a server's snapshot of its open
// connections (Present) is every waiter in it seen when it was taken, for
// as long as it is the server's latest: a waiter that moved to another
// server is marked (Alive) before it leaves the first one's snapshot and
// keeps its place; the waiters of a server that stopped go abandon_after_s
// after its last snapshot, never before; one in no snapshot goes too.
func testPresentKeepsOpenWaitersFromAbandon(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.AbandonAfterS = 30; s.Paused = true })
	ctx := context.Background()
	a1 := f.enter(t, "sale", "v:a1")
	a2 := f.enter(t, "sale", "v:a2")
	b1 := f.enter(t, "sale", "v:b1")
	closed := f.enter(t, "sale", "v:closed")
	present := func(server string, ts ...queue.Ticket) {
		t.Helper()
		ids := make([]string, len(ts))
		for i, tk := range ts {
			ids[i] = tk.ID
		}
		if err := f.store.Present(ctx, "sale", server, ids, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for range 6 { // 60 s, no status read by anyone
		f.clock.Advance(10 * time.Second)
		present("a", a1, a2)
		present("b", b1)
		f.tick(t, "sale")
	}
	if got := f.status(t, "sale", closed); got.State != vocab.StateExpired || got.Reason != "abandoned" {
		t.Fatalf("closed connection: %s (%s), want abandoned", got.State, got.Reason)
	}
	// a2 moves to b: marked by a as it leaves a's snapshot.
	f.clock.Advance(10 * time.Second)
	if err := f.store.Alive(ctx, "sale", []string{a2.ID}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	present("a", a1)
	f.clock.Advance(5 * time.Second)
	present("b", b1, a2)
	last := f.clock.Now() // b's last snapshot: b stops here
	for range 5 {
		f.clock.Advance(5 * time.Second)
		present("a", a1)
		if r := f.tick(t, "sale"); r.Abandoned != 0 {
			t.Fatalf("%d dropped within abandon_after_s of their last snapshot", r.Abandoned)
		}
	}
	f.clock.Advance(last.Add(31 * time.Second).Sub(f.clock.Now()))
	present("a", a1)
	if r := f.tick(t, "sale"); r.Abandoned != 2 {
		t.Fatalf("%d dropped, want b's 2 after abandon_after_s", r.Abandoned)
	}
	if got := f.status(t, "sale", a1); got.State != vocab.StateWaiting {
		t.Fatalf("a's open waiter: %s (%s)", got.State, got.Reason)
	}
	for _, tk := range []queue.Ticket{a2, b1} {
		if got := f.status(t, "sale", tk); got.Reason != "abandoned" {
			t.Fatalf("%s of the stopped server: %s (%s), want abandoned", tk.Identity, got.State, got.Reason)
		}
	}
}

// testPresentInALongLineAndAtTheHead: snapshots of two servers over a line
// longer than a tick's sweep keep their waiters from the sweep, and the
// head's check as it is admitted; the silent go.
func testPresentInALongLineAndAtTheHead(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "long", func(s *queue.Settings) { s.AbandonAfterS = 30; s.Paused = true; s.BatchSize = 5 })
	ctx := context.Background()
	const n = 2*queue.MaxScan + 200
	var onA, onB []string
	silent := 0
	for i := range n {
		tk := f.enter(t, "long", fmt.Sprintf("v:%d", i))
		switch {
		case i%3 == 0:
			onA = append(onA, tk.ID)
		case i%3 == 1 && i > 10:
			onB = append(onB, tk.ID)
		default:
			silent++
		}
	}
	for range 4 { // 40 s
		f.clock.Advance(10 * time.Second)
		if err := f.store.Present(ctx, "long", "a", onA, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if err := f.store.Present(ctx, "long", "b", onB, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	var dropped int64
	for range (len(onA)+len(onB))/queue.SweepKeep + 2 {
		r := f.tick(t, "long")
		dropped += r.Abandoned
	}
	if dropped != int64(silent) {
		t.Fatalf("dropped %d of %d silent waiters", dropped, silent)
	}
	f.room(t, "long", func(s *queue.Settings) { s.AbandonAfterS = 30; s.Paused = false; s.BatchSize = 5 })
	r := f.tick(t, "long")
	if len(r.Admitted) != 5 || r.Abandoned != 0 {
		t.Fatalf("admitted %d, abandoned %d at the head; want 5 and 0", len(r.Admitted), r.Abandoned)
	}
	st, _ := f.store.Stats(ctx, "long", f.clock.Now())
	if st.Waiting != int64(len(onA)+len(onB)-5) {
		t.Fatalf("%d waiting, want %d", st.Waiting, len(onA)+len(onB)-5)
	}
}

// testConcurrentEntersAreAsIfOneByOne: many visitors entering at once, each
// three times (tabs: two on one server, one on another): one ticket per visitor, seqs without a
// gap, every answer's position its seq (nobody leaves), and a follower of
// the change log gives the store's positions. A store may carry several
// enters in one call; the outcome must be that of one call each.
func testConcurrentEntersAreAsIfOneByOne(t *testing.T, target Open) {
	shared := target(t)
	a := newFixtureOn(t, shared, nil)
	b := newFixtureOn(t, shared, nil)
	a.room(t, "sale", func(s *queue.Settings) { s.Paused = true })
	v := queue.NewRoomView(a.server(), "sale")
	if err := v.Resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n = 150
	got := make([][3]queue.Ticket, n)
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		for tab, f := range []*fixture{a, a, b} {
			wg.Go(func() {
				tk, _, err := f.line.Enter(context.Background(), "sale", fmt.Sprintf("v:%03d", i))
				got[i][tab] = tk
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	seqs := map[int64]bool{}
	var ids []string
	for i, tabs := range got {
		if tabs[0].ID != tabs[1].ID || tabs[0].ID != tabs[2].ID {
			t.Fatalf("visitor %d got several tickets: %s, %s, %s", i, tabs[0].ID, tabs[1].ID, tabs[2].ID)
		}
		for _, tk := range tabs {
			if tk.State != vocab.StateWaiting || tk.Position != tk.Seq {
				t.Fatalf("visitor %d: %s at %d with seq %d, want waiting at its seq", i, tk.State, tk.Position, tk.Seq)
			}
		}
		seqs[tabs[0].Seq] = true
		ids = append(ids, tabs[0].ID)
	}
	for s := int64(1); s <= n; s++ {
		if !seqs[s] {
			t.Fatalf("no ticket has seq %d of 1..%d", s, n)
		}
	}
	catchUp(t, v)
	comparePositions(t, a, "sale", ids, v)
}
