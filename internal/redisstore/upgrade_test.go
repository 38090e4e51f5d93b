package redisstore_test

import (
	"context"
	_ "embed"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/hexid"
	"github.com/waitroom/waitroom/internal/redistest"
	"github.com/waitroom/waitroom/queue"
)

// enterJSON is enter.lua as it was before issue 13: JSON records, members
// = ticket ids. A server still running it during a rolling upgrade writes
// tickets that the new scripts must read, change and purge.
//
//go:embed testdata/enter_json.lua
var enterJSON string

// TestTicketsOfTheJSONEncodingStillWork: tickets entered by the old script
// keep their ids, places and identities through status, re-enter, leave,
// tick, hold, complete and the purge, beside tickets of the new encoding.
func TestTicketsOfTheJSONEncodingStillWork(t *testing.T) {
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	s := f.room(t, "up", func(s *queue.Settings) { s.Paused, s.BatchSize, s.JitterMS = true, 10, 0 })
	b := prefix + "{up}:"
	old := redis.NewScript(enterJSON)
	enterOld := func(who string) queue.Ticket {
		t.Helper()
		id := queue.RandomID()
		res, err := old.Run(ctx, rdb,
			[]string{b + "visitors", b + "tickets", b + "seq", b + "q", b + "seen", b + "active", b + "budget", b + "stats", b + "admits", b + "pow:x", b + "pre"},
			who, id, f.clock.Now().UnixMilli(), "paused", s.Capacity, s.BatchSize, s.BatchIntervalMS,
			f.clock.Now().UnixMilli(), s.SessionTTLS*1000, "none", 1, 0).Slice()
		if err != nil || res[0] != id {
			t.Fatalf("old enter %s: %v %v", who, res, err)
		}
		return queue.Ticket{ID: id, Identity: who}
	}
	a, bb, c := enterOld("v:a"), enterOld("v:b"), enterOld("v:c")
	d := f.enter(t, "up", "v:d")
	if !hexid.Valid(d.ID) || d.Position != 4 || d.Seq != 4 {
		t.Fatalf("new ticket behind three old ones: %+v", d)
	}
	if got := f.status(t, "up", a); got.State != queue.StateWaiting || got.Position != 1 || got.Seq != 1 {
		t.Fatalf("old ticket a: %+v", got)
	}
	if again := f.enter(t, "up", "v:a"); again.ID != a.ID || again.Position != 1 {
		t.Fatalf("old identity entering again: %+v, want its ticket %s at 1", again, a.ID)
	}
	if _, _, err := f.line.Status(ctx, "up", a.ID, "v:d"); err == nil {
		t.Fatal("old ticket read by another identity")
	}
	if err := f.store.Leave(ctx, "up", bb.ID, "v:b", f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := f.status(t, "up", c); got.Position != 2 {
		t.Fatalf("old ticket c at %d after b left, want 2", got.Position)
	}

	s.Paused = false
	if err := f.line.PutRoom(ctx, "up", s); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	r := f.tick(t, "up")
	if want := []string{a.ID, c.ID, d.ID}; !slices.Equal(r.Admitted, want) {
		t.Fatalf("admitted %v, want %v (old and new ids, in line order)", r.Admitted, want)
	}
	if got := f.status(t, "up", c); got.State != queue.StateAdmitted {
		t.Fatalf("old ticket c after the tick: %+v", got)
	}
	if ok, err := f.store.Hold(ctx, "up", a.ID, "v:a", queue.HoldOwner, time.Minute); err != nil || !ok {
		t.Fatalf("hold of old ticket a by its owner: %v %v", ok, err)
	}
	if ok, _, err := f.store.Active(ctx, "up", a.ID, f.clock.Now()); err != nil || !ok {
		t.Fatalf("old ticket a active: %v %v", ok, err)
	}
	if err := f.store.Complete(ctx, "up", a.ID, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, why, _ := f.store.Active(ctx, "up", a.ID, f.clock.Now()); ok || why != "completed" {
		t.Fatalf("old ticket a after complete: %v %q", ok, why)
	}

	// Nothing of a or b is left once the grace period is over.
	f.clock.Advance(queue.EndedKept + time.Second)
	f.tick(t, "up")
	for _, gone := range []queue.Ticket{a, bb} {
		if n, _ := rdb.HExists(ctx, b+"tickets", gone.ID).Result(); n {
			t.Fatalf("record of %s left after the purge", gone.Identity)
		}
		if n, _ := rdb.HExists(ctx, b+"visitors", gone.Identity).Result(); n {
			t.Fatalf("visitor %s left after the purge", gone.Identity)
		}
	}
	if st, err := f.store.Stats(ctx, "up", f.clock.Now()); err != nil || st.EnteredTotal != 4 {
		t.Fatalf("stats: %+v %v", st, err)
	}
}
