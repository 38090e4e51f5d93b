package redisstore_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// TestRetireOldRecordsMovesCompactRecordsIntoTheBuckets: the one-shot
// migration moves the compact records of the release before the buckets
// into the buckets, their signs of life and visitors with them, keeping
// ids, places, states and identities; JSON records stay, counted; the
// startup check counts what is left, and a second run moves nothing more.
func TestRetireOldRecordsMovesCompactRecordsIntoTheBuckets(t *testing.T) {
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	s := f.room(t, "up", func(s *queue.Settings) { s.Paused, s.BatchSize, s.JitterMS = true, 1, 0 })
	b := prefix + "{up}:"
	old := newOldServer(t, f, rdb, prefix, "up", s)
	enterCompact, enterJSONTicket := old.enterCompact, old.enterJSON
	who := queue.VisitorIdentity
	a, u, c := enterCompact(who("a")), enterCompact("u:b"), enterCompact(who("c"))
	j := enterJSONTicket(who("j"))
	d := f.enter(t, "up", who("d"))

	// a is admitted before the migration: its slot's times move with it.
	s.Paused = false
	if err := f.line.PutRoom(ctx, "up", s); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	if r := f.tick(t, "up"); !slices.Equal(r.Admitted, []string{a.ID}) {
		t.Fatalf("admitted %v, want a", r.Admitted)
	}
	rs := f.store.(*redisstore.Store)
	before := map[string]queue.Ticket{}
	for _, tk := range []queue.Ticket{a, u, c, j, d} {
		before[tk.ID] = f.status(t, "up", tk)
	}

	if old, err := rs.OldRecords(ctx); err != nil || !maps.Equal(old, map[string]int64{"up": 4}) {
		t.Fatalf("startup check before: %v %v, want 4 in up", old, err)
	}
	got, err := rs.RetireOldRecords(ctx, "up")
	if err != nil || got.Moved != 3 || got.Left != 1 {
		t.Fatalf("retire: %+v %v, want 3 moved, the JSON one left", got, err)
	}
	if old, err := rs.OldRecords(ctx); err != nil || !maps.Equal(old, map[string]int64{"up": 1}) {
		t.Fatalf("startup check after: %v %v, want the JSON one", old, err)
	}
	if n, _ := rdb.HLen(ctx, b+"visitors").Result(); n != 1 {
		t.Errorf("old visitors hash holds %d, want the JSON ticket's 1", n)
	}
	if n, _ := rdb.ZCard(ctx, b+"seen").Result(); n != 1 {
		t.Errorf("old seen set holds %d, want the JSON ticket's 1", n)
	}

	for _, tk := range []queue.Ticket{a, u, c, j, d} {
		after := f.status(t, "up", tk)
		was := before[tk.ID]
		if after.ID != was.ID || after.State != was.State || after.Position != was.Position || after.Identity != was.Identity ||
			after.Seq != was.Seq || after.EntryPosition != was.EntryPosition || !after.EnteredAt.Equal(was.EnteredAt) ||
			!after.OrderableAt.Equal(was.OrderableAt) || !after.ExpiresAt.Equal(was.ExpiresAt) {
			t.Errorf("%s after the migration: %+v, was %+v", tk.Identity, after, was)
		}
	}
	if again := f.enter(t, "up", c.Identity); again.ID != c.ID || again.State != vocab.StateWaiting {
		t.Errorf("c entering again: %+v, want its ticket %s", again, c.ID)
	}
	if _, _, err := f.line.Status(ctx, "up", c.ID, d.Identity); err == nil {
		t.Error("a moved ticket read by another identity")
	}
	if ok, _, err := f.store.Active(ctx, "up", a.ID, f.clock.Now()); err != nil || !ok {
		t.Errorf("moved admitted ticket a active: %v %v", ok, err)
	}
	if again, err := rs.RetireOldRecords(ctx, "up"); err != nil || again.Moved != 0 || again.Left != 1 {
		t.Errorf("second run: %+v %v, want nothing moved", again, err)
	}
	// The line goes on in its order across moved and new tickets.
	f.clock.Advance(time.Second)
	if r := f.tick(t, "up"); !slices.Equal(r.Admitted, []string{u.ID}) {
		t.Errorf("next admitted %v, want u", r.Admitted)
	}
	if err := f.store.Leave(ctx, "up", c.ID, c.Identity, f.clock.Now()); err != nil {
		t.Errorf("moved ticket c leaves: %v", err)
	}
}
