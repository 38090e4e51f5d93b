package redisstore_test

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// enterJSON is enter.lua as it was before issue 13: JSON records, members
// = ticket ids. A server still running it during a rolling upgrade writes
// tickets that the new scripts must read, change and purge.
//
//go:embed testdata/enter_json.lua
var enterJSON string

// enterCompact is enter.lua (with its record.lua) of the release before the
// bucketed keys: compact records in the room's tickets hash, seq members,
// the seen sorted set, the visitors hash.
var (
	//go:embed testdata/record_compact.lua
	recordCompact string
	//go:embed testdata/enter_compact.lua
	enterCompactLua string
)

// oldServer enters tickets into one room with the old enter scripts, as a
// server of those releases would.
type oldServer struct {
	t   *testing.T
	rdb *redis.Client
	f   *fixture
	s   queue.Settings
	b   string // the room's key prefix
}

func newOldServer(t *testing.T, f *fixture, rdb *redis.Client, prefix, room string, s queue.Settings) oldServer {
	return oldServer{t: t, rdb: rdb, f: f, s: s, b: prefix + "{" + room + "}:"}
}

// run runs script with the old enter's keys (log only where it had one)
// and arguments for who and id.
func (o oldServer) run(script string, log bool, who, id string) []any {
	o.t.Helper()
	b, s, now := o.b, o.s, o.f.clock.Now().UnixMilli()
	keys := []string{b + "visitors", b + "tickets", b + "seq", b + "q", b + "seen", b + "active", b + "budget", b + "stats", b + "admits", b + "pow:x", b + "pre"}
	if log {
		keys = append(keys, b+"log")
	}
	res, err := redis.NewScript(script).Run(context.Background(), o.rdb, keys,
		who, id, now, "paused", s.Capacity, s.BatchSize, s.BatchIntervalMS, now, s.SessionTTLS*1000, "none", 1, 0).Slice()
	if err != nil {
		o.t.Fatalf("old enter %s: %v", who, err)
	}
	return res
}

// enterJSON enters who with the JSON-record script.
func (o oldServer) enterJSON(who string) queue.Ticket {
	o.t.Helper()
	id := queue.RandomID()
	if res := o.run(enterJSON, false, who, id); res[0] != id {
		o.t.Fatalf("JSON enter %s: %v", who, res)
	}
	return queue.Ticket{ID: id, Identity: who}
}

// enterCompact enters who with the compact-record script: its id keeps the
// random tail it was given.
func (o oldServer) enterCompact(who string) queue.Ticket {
	o.t.Helper()
	id := queue.RandomID()
	res := o.run(recordCompact+enterCompactLua, true, who, id[12:])
	got, _ := res[0].(string)
	if len(res) != 5 || !hexid.Valid(got) || got[12:] != id[12:] {
		o.t.Fatalf("compact enter %s: %v", who, res)
	}
	return queue.Ticket{ID: got, Identity: who}
}

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
	enterOld := newOldServer(t, f, rdb, prefix, "up", s).enterJSON
	a, bb, c := enterOld("v:a"), enterOld("v:b"), enterOld("v:c")
	d := f.enter(t, "up", "v:d")
	if !hexid.Valid(d.ID) || d.Position != 4 || d.Seq != 4 {
		t.Fatalf("new ticket behind three old ones: %+v", d)
	}
	if got := f.status(t, "up", a); got.State != vocab.StateWaiting || got.Position != 1 || got.Seq != 1 {
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
	if got := f.status(t, "up", c); got.State != vocab.StateAdmitted {
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

// TestTicketsOfTheCompactEncodingStillWork: tickets entered by the release
// before the bucketed keys (compact records in the tickets hash, the seen
// set, the visitors hash) keep their ids, places and identities through
// status, re-enter, the sign of life, leave, abandonment, tick, hold,
// complete and the purge, beside tickets in the buckets; the old keys empty
// out as those tickets end.
func TestTicketsOfTheCompactEncodingStillWork(t *testing.T) {
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	s := f.room(t, "up", func(s *queue.Settings) { s.Paused, s.BatchSize, s.JitterMS, s.AbandonAfterS = true, 10, 0, 30 })
	b := prefix + "{up}:"
	enterOld := newOldServer(t, f, rdb, prefix, "up", s).enterCompact
	who := func(n string) string { return queue.VisitorIdentity(n) } // cookie visitors: packed in the new records
	a, bb, c, g := enterOld(who("a")), enterOld("u:b"), enterOld(who("c")), enterOld(who("ghost"))
	d := f.enter(t, "up", who("d"))
	if !hexid.Valid(d.ID) || d.Position != 5 || d.Seq != 5 {
		t.Fatalf("new ticket behind four old ones: %+v", d)
	}
	if n, _ := rdb.HLen(ctx, b+"tickets").Result(); n != 4 {
		t.Fatalf("old tickets hash holds %d, want the 4 old tickets (the new one in a bucket)", n)
	}
	if got := f.status(t, "up", a); got.State != vocab.StateWaiting || got.Position != 1 || got.Seq != 1 || got.Identity != a.Identity {
		t.Fatalf("old ticket a: %+v", got)
	}
	if again := f.enter(t, "up", a.Identity); again.ID != a.ID || again.Position != 1 {
		t.Fatalf("old identity entering again: %+v, want its ticket %s at 1", again, a.ID)
	}
	if _, _, err := f.line.Status(ctx, "up", a.ID, d.Identity); err == nil {
		t.Fatal("old ticket read by another identity")
	}
	if _, _, err := f.line.Status(ctx, "up", d.ID, a.Identity); err == nil {
		t.Fatal("new ticket read by another identity")
	}
	if err := f.store.Leave(ctx, "up", bb.ID, bb.Identity, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := f.status(t, "up", c); got.Position != 2 {
		t.Fatalf("old ticket c at %d after b left, want 2", got.Position)
	}

	// The ghost stays silent; a, c (old) and d (new) show a sign of life
	// through the batched Alive: the old ones in the seen set, d in its bucket.
	f.clock.Advance(20 * time.Second)
	if err := f.store.Alive(ctx, "up", []string{a.ID, c.ID, d.ID}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(15 * time.Second)
	if r := f.tick(t, "up"); r.Abandoned != 1 {
		t.Fatalf("abandoned %d, want the old ghost only", r.Abandoned)
	}
	if got := f.status(t, "up", g); got.State != vocab.StateExpired || got.Reason != "abandoned" {
		t.Fatalf("old ghost: %+v", got)
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
	for _, tk := range []queue.Ticket{c, d} {
		got := f.status(t, "up", tk)
		if got.State != vocab.StateAdmitted || got.Identity != tk.Identity {
			t.Fatalf("%s after the tick: %+v", tk.Identity, got)
		}
		if tok, err := f.line.Token(got); err != nil || tok == "" {
			t.Fatalf("token of %s: %q %v", tk.Identity, tok, err)
		}
	}
	many, err := f.store.StatusMany(ctx, "up", nil, []string{c.ID, d.ID}, f.clock.Now())
	if err != nil || many[0].Identity != c.Identity || many[1].Identity != d.Identity {
		t.Fatalf("status of many without an owner keeps the identities (the token's subject): %+v %v", many, err)
	}
	for _, tk := range []queue.Ticket{a, d} {
		if ok, err := f.store.Hold(ctx, "up", tk.ID, tk.Identity, queue.HoldOwner, time.Minute); err != nil || !ok {
			t.Fatalf("hold of %s by its owner: %v %v", tk.Identity, ok, err)
		}
		if ok, err := f.store.Hold(ctx, "up", tk.ID, who("thief"), queue.HoldOwner, time.Minute); err != nil || ok {
			t.Fatalf("hold of cookie visitor %s's token by another: %v %v", tk.Identity, ok, err)
		}
		if ok, _, err := f.store.Active(ctx, "up", tk.ID, f.clock.Now()); err != nil || !ok {
			t.Fatalf("%s active: %v %v", tk.Identity, ok, err)
		}
		if err := f.store.Complete(ctx, "up", tk.ID, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if ok, why, _ := f.store.Active(ctx, "up", tk.ID, f.clock.Now()); ok || why != "completed" {
			t.Fatalf("%s after complete: %v %q", tk.Identity, ok, why)
		}
	}
	if err := f.store.Leave(ctx, "up", c.ID, c.Identity, f.clock.Now()); err != nil {
		t.Fatal(err)
	}

	// Every ticket has ended: after the grace period nothing of them is left,
	// in the old keys or the buckets.
	f.clock.Advance(queue.EndedKept + time.Second)
	if r := f.tick(t, "up"); r.Purged != 5 {
		t.Fatalf("purged %d, want 5", r.Purged)
	}
	keys, err := rdb.Keys(ctx, b+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		for _, gone := range []string{"tickets", "visitors", "seen", "q", "active", "ended", "t:", "s:", "v:"} {
			if strings.HasPrefix(k, b+gone) {
				t.Fatalf("key %s left after every ticket ended and was purged", k)
			}
		}
	}
	if again := f.enter(t, "up", a.Identity); again.ID == a.ID || again.Seq != 6 {
		t.Fatalf("re-entry after the purge: %+v", again)
	}
}

// TestTheSingleVisitorsHashIsReadWhileInUse: a room whose first ticket is a
// bucketed one does not read the single visitors hash of the releases
// before on enter; a ticket kept under an id not ours (which uses that
// hash) turns the reading back on, so its identity still gets it back.
func TestTheSingleVisitorsHashIsReadWhileInUse(t *testing.T) {
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	f.room(t, "single", func(s *queue.Settings) { s.Paused = true })
	stats := prefix + "{single}:stats"

	first := f.enter(t, "single", queue.VisitorIdentity("first"))
	if v, _ := rdb.HGet(ctx, stats, "vonly").Result(); v != "1" {
		t.Fatalf("stats vonly = %q after the room's first ticket, want 1", v)
	}
	// A stale entry there is not read: the visitor gets a ticket of its own.
	stale := queue.VisitorIdentity("stale")
	rdb.HSet(ctx, prefix+"{single}:visitors", stale, first.ID)
	if got := f.enter(t, "single", stale); got.ID == first.ID || got.Position != 2 {
		t.Fatalf("enter with a stale single-hash entry: %+v, want a new ticket at 2", got)
	}

	var next atomic.Int64
	plain := queue.NewLine(f.store, f.keys, queue.LineOptions{Clock: f.clock, Jitter: func(time.Duration) time.Duration { return 0 },
		NewID: func() string { return fmt.Sprintf("plain-%d", next.Add(1)) }})
	tk, _, err := plain.Enter(ctx, "single", "u:plain")
	if err != nil || tk.ID != "plain-1" {
		t.Fatalf("enter under an id not ours: %+v, %v", tk, err)
	}
	if n, _ := rdb.HExists(ctx, stats, "vonly").Result(); n {
		t.Fatal("stats vonly kept after a ticket went to the single visitors hash")
	}
	again, _, err := plain.Enter(ctx, "single", "u:plain")
	if err != nil || again.ID != tk.ID {
		t.Fatalf("the same identity entering again: %+v, %v; want its ticket %s", again, err, tk.ID)
	}
}
