package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// needRealRedis skips where only the in-process fallback runs: memory and
// time inside Redis mean nothing there.
func needRealRedis(t *testing.T) {
	t.Helper()
	if !redistest.Real(t) {
		t.Skip("redis-server is not on PATH")
	}
}

// stuff enters n new visitors named prefix-0… concurrently, as a flood would.
func (f *fixture) stuff(t *testing.T, room, prefix string, n int) []queue.Ticket {
	t.Helper()
	out := make([]queue.Ticket, n)
	var next atomic.Int64
	g, ctx := errgroup.WithContext(context.Background())
	for range 16 {
		g.Go(func() error {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return nil
				}
				tk, _, err := f.line.Enter(ctx, room, fmt.Sprintf("v:%s-%d", prefix, i))
				if err != nil {
					return err
				}
				out[i] = tk
			}
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return out
}

// roomMemory is the bytes Redis holds for every key of the room (MEMORY
// USAGE with every element counted), and the keys' names.
func roomMemory(t *testing.T, rdb *redis.Client, prefix, room string) (int64, []string) {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"{"+room+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, k := range keys {
		n, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	return sum, keys
}

func TestEndedTicketsLeaveNothingBehind(t *testing.T) {
	needRealRedis(t)
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	const room = "stuffed"
	f.room(t, room, func(s *queue.Settings) { s.Paused = true })
	live := f.stuff(t, room, "live", 10) // real waiters who stay throughout
	before, _ := roomMemory(t, rdb, prefix, room)

	// 10,000 tickets, ended every way there is: 2,000 each completed, left
	// while admitted, left while waiting, abandoned and reclaimed.
	f.room(t, room, func(s *queue.Settings) { s.Activation = queue.ActivationOff; s.SessionTTLS = 60 })
	admitted := f.stuff(t, room, "in", 6000)
	f.room(t, room, func(s *queue.Settings) { s.Paused = true; s.SessionTTLS = 60 })
	waiting := f.stuff(t, room, "wait", 4000)
	full, _ := roomMemory(t, rdb, prefix, room)
	for i, tk := range admitted {
		if tk.State != vocab.StateAdmitted {
			t.Fatalf("admitted[%d] is %s", i, tk.State)
		}
		switch {
		case i < 2000:
			if err := f.store.Complete(ctx, room, tk.ID, f.clock.Now()); err != nil {
				t.Fatal(err)
			}
		case i < 4000:
			if err := f.line.Leave(ctx, room, tk.ID, tk.Identity); err != nil {
				t.Fatal(err)
			}
		} // the rest are reclaimed when their session ends
	}
	for _, tk := range waiting[:2000] {
		if err := f.line.Leave(ctx, room, tk.ID, tk.Identity); err != nil {
			t.Fatal(err)
		}
	}
	// The live waiters keep showing a sign of life; the other 2,000 do not.
	f.clock.Advance(time.Duration(queue.DefaultSettings().AbandonAfterS+1) * time.Second)
	for _, tk := range live {
		f.status(t, room, tk)
	}
	var reclaimed, abandoned int64
	for range 20 {
		r := f.tick(t, room)
		reclaimed, abandoned = reclaimed+r.Reclaimed, abandoned+r.Abandoned
	}
	// The sessions were 60 s plus jitter: by now every one has run out.
	f.clock.Advance(time.Minute)
	for _, tk := range live {
		f.status(t, room, tk)
	}
	for range 20 {
		r := f.tick(t, room)
		reclaimed, abandoned = reclaimed+r.Reclaimed, abandoned+r.Abandoned
	}
	if reclaimed != 2000 || abandoned != 2000 {
		t.Fatalf("reclaimed %d, abandoned %d; want 2000 each", reclaimed, abandoned)
	}

	// Within the grace period every owner can still read why it ended.
	for i, want := range map[int]string{0: "completed", 2000: "left", 5999: "reclaimed"} {
		if got := f.status(t, room, admitted[i]); got.State != vocab.StateExpired || got.Reason != want {
			t.Fatalf("admitted[%d] within grace: %s/%s, want expired/%s", i, got.State, got.Reason, want)
		}
	}
	if got := f.status(t, room, waiting[3999]); got.Reason != "abandoned" {
		t.Fatalf("abandoned waiter within grace: %s/%s", got.State, got.Reason)
	}

	// After the grace period the ticks delete them, at most 500 each.
	f.clock.Advance(queue.EndedKept + time.Second)
	for _, tk := range live {
		f.status(t, room, tk)
	}
	var purged int64
	ticks := 0
	for ; ticks < 40; ticks++ {
		r := f.tick(t, room)
		if r.Purged > 500 {
			t.Fatalf("one tick purged %d", r.Purged)
		}
		if r.Purged == 0 {
			break
		}
		purged += r.Purged
	}
	if purged != 10_000 || ticks < 20 {
		t.Fatalf("purged %d in %d ticks, want 10000 in at least 20", purged, ticks)
	}
	if _, _, err := f.line.Status(ctx, room, admitted[0].ID, admitted[0].Identity); !errors.Is(err, queue.ErrTicketNotFound) {
		t.Fatalf("status of a purged ticket: %v, want ErrTicketNotFound", err)
	}
	after, keys := roomMemory(t, rdb, prefix, room)
	// Records and visitors entries, in the buckets (t:, v:) and the keys of
	// the releases before (tickets, visitors).
	entries := map[string]int64{}
	perKey := map[string]int64{}
	base := prefix + "{" + room + "}:"
	for _, k := range keys {
		name := strings.TrimPrefix(k, base)
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name = name[:i] // a bucket counts with its kind
		}
		n, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		perKey[name] += n
		if name == "t" || name == "tickets" || name == "v" || name == "visitors" {
			l, err := rdb.HLen(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			entries[name[:1]] += l
		}
	}
	t.Logf("room keys: %d B before, %d B with 10,000 more tickets, %d B after they ended and were purged (%d keys)",
		before, full, after, len(keys))
	t.Logf("per kind of key after: %v", perKey)
	if entries["v"] != int64(len(live)) || entries["t"] != int64(len(live)) {
		t.Fatalf("visitors %d, tickets %d left; want %d each (the live waiters)", entries["v"], entries["t"], len(live))
	}
	if s, err := rdb.HLen(ctx, base+"s:0").Result(); err != nil || s != int64(len(live)) {
		t.Fatalf("signs of life left: %d (%v), want %d (the live waiters)", s, err, len(live))
	}
	// What stays of the buckets is the live waiters' entries and an empty
	// key's worth per bucket that holds one: a few KiB, never the tickets.
	if perKey["t"]+perKey["v"]+perKey["s"] > 48<<10 {
		t.Fatalf("record, visitors and sign-of-life buckets hold %d B after the purge", perKey["t"]+perKey["v"]+perKey["s"])
	}
	if _, ok := perKey["ended"]; ok {
		t.Fatalf("the ended set is still there: %d B", perKey["ended"])
	}
	// The change log keeps about as many entries as wait (at least
	// LogKeepMin, whole stream nodes of 100): bounded by the live line, not
	// by the tickets that ended, so it is held to that and left out below.
	logLen, err := rdb.XLen(ctx, prefix+"{"+room+"}:log").Result()
	if err != nil {
		t.Fatal(err)
	}
	if logLen > int64(queue.LogKeeps(len(live)))+100 {
		t.Fatalf("the change log keeps %d entries with %d waiting", logLen, len(live))
	}
	after -= perKey["log"]
	// The tables above, not a share of the full size: entries got smaller
	// (issue 13), the tables did not.
	if after-before > 128<<10 {
		t.Fatalf("room keys hold %d B after the purge, %d B before, %d B full", after, before, full)
	}
	for _, tk := range live {
		if got := f.status(t, room, tk); got.State != vocab.StateWaiting {
			t.Fatalf("a live waiter was touched: %+v", got)
		}
	}
	// Entering again after the purge gives a new ticket, not the purged one.
	again := f.enter(t, room, admitted[0].Identity)
	if again.ID == admitted[0].ID || again.State != vocab.StateWaiting {
		t.Fatalf("re-entry after purge: %+v", again)
	}
}

func TestTickStaysBoundedWithGhostsAtTheHead(t *testing.T) {
	needRealRedis(t)
	const ghosts = 50_000
	f := newFixture(t, "", nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	const room = "haunted"
	f.room(t, room, func(s *queue.Settings) { s.Paused = true })
	f.stuff(t, room, "ghost", ghosts)
	f.clock.Advance(time.Duration(queue.DefaultSettings().AbandonAfterS+1) * time.Second)
	real := f.stuff(t, room, "real", 5)
	sort.Slice(real, func(i, j int) bool { return real[i].Seq < real[j].Seq })
	f.room(t, room, nil) // unpaused: the head is 50,000 ghosts, then 5 live waiters

	var maxUS, totalUS int64
	cpu0 := redisCPU(t, rdb)
	admitted := 0
	ticks := 0
	for ; admitted < len(real) && ticks < 60; ticks++ {
		f.clock.Advance(200 * time.Millisecond) // a fresh budget each tick
		us0, err := scriptUS(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		r := f.tick(t, room)
		us1, err := scriptUS(ctx, rdb)
		if err != nil {
			t.Fatal(err)
		}
		maxUS, totalUS = max(maxUS, us1-us0), totalUS+us1-us0
		// Bounded work: 500 dropped by last sign of life, 500 popped at the head.
		if r.Abandoned > 1000 {
			t.Fatalf("tick %d dropped %d ghosts at once", ticks, r.Abandoned)
		}
		for i, id := range r.Admitted {
			if id != real[admitted+i].ID {
				t.Fatalf("tick %d admitted %s, want the live waiters in order", ticks, id)
			}
		}
		admitted += len(r.Admitted)
	}
	if admitted != len(real) {
		t.Fatalf("after %d ticks %d of %d live waiters admitted", ticks, admitted, len(real))
	}
	if ticks < ghosts/1000 {
		t.Fatalf("drained %d ghosts in %d ticks: not bounded", ghosts, ticks)
	}
	cpu := redisCPU(t, rdb) - cpu0
	t.Logf("%d ghosts drained in %d ticks; time in Redis per tick: max %d µs, mean %d µs; redis-server CPU per tick %v",
		ghosts, ticks, maxUS, totalUS/int64(ticks), cpu/time.Duration(ticks))
}

// scriptUS is the microseconds Redis has spent in scripts (EVAL and EVALSHA).
func scriptUS(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, fmt.Errorf("info commandstats: %w", err)
	}
	var sum int64
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "cmdstat_eval:") && !strings.HasPrefix(line, "cmdstat_evalsha:") {
			continue
		}
		for _, kv := range strings.Split(line[strings.Index(line, ":")+1:], ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				sum += n
			}
		}
	}
	return sum, nil
}

// redisCPU is the CPU time redis-server has used (INFO cpu), which unlike
// the commands' wall time does not count the time a busy machine kept it waiting.
func redisCPU(t testing.TB, rdb *redis.Client) time.Duration {
	t.Helper()
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			sum += f
		}
	}
	return time.Duration(sum * float64(time.Second))
}

// TestDeleteRoomRemovesEveryKey: the buckets (t:, s:, v:) and the servers'
// snapshots (pr:) go with the room, as its single keys do, however many of
// them the room grew.
func TestDeleteRoomRemovesEveryKey(t *testing.T) {
	needRealRedis(t)
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	const room = "gone"
	f.room(t, room, func(s *queue.Settings) { s.Paused = true })
	waiting := f.stuff(t, room, "w", 700) // 22 record buckets, ~50 visitors buckets
	if err := f.line.Leave(ctx, room, waiting[0].ID, waiting[0].Identity); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(waiting))
	for i, tk := range waiting {
		ids[i] = tk.ID
	}
	if err := f.store.Alive(ctx, room, ids, f.clock.Now()); err != nil { // signs of life: s: buckets
		t.Fatal(err)
	}
	for _, server := range []string{"a", "b"} { // servers' snapshots: pr, pr:a, pr:b
		if err := f.store.Present(ctx, room, server, ids, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	f.room(t, room, nil)
	f.clock.Advance(time.Second)
	if r := f.tick(t, room); len(r.Admitted) == 0 {
		t.Fatal("nothing admitted")
	}
	keys, err := rdb.Keys(ctx, prefix+"{"+room+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, k := range keys {
		name := strings.TrimPrefix(k, prefix+"{"+room+"}:")
		if i := strings.IndexByte(name, ':'); i >= 0 {
			kinds[name[:i]]++
		}
	}
	if kinds["t"] < 20 || kinds["s"] < 20 || kinds["v"] < 30 || kinds["pr"] != 2 {
		t.Fatalf("buckets before the delete: %v, want t ≥ 20, s ≥ 20, v ≥ 30, pr 2", kinds)
	}
	if err := f.store.DeleteRoom(ctx, room); err != nil {
		t.Fatal(err)
	}
	left, err := rdb.Keys(ctx, prefix+"{"+room+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("%d keys of %d left after DeleteRoom: %v", len(left), len(keys), left)
	}
}

// TestBucketsStayListpacks: with cookie visitors, every record, sign-of-life
// and visitors bucket stays within Redis's listpack limits (≤ 128 entries,
// values ≤ 64 B), in every state a record takes, at the longest session and
// jitter the settings allow: the layout's bytes per waiter depend on it.
func TestBucketsStayListpacks(t *testing.T) {
	needRealRedis(t)
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, func(max time.Duration) time.Duration { return max - time.Millisecond })
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	const room = "packed"
	longest := func(s *queue.Settings) {
		s.SessionTTLS, s.JitterMS, s.Capacity, s.BatchSize, s.AbandonAfterS = 86_400, 600_000, 100_000, 10_000, 7200
	}
	f.room(t, room, func(s *queue.Settings) { longest(s); s.Activation = queue.ActivationOff })
	var tickets []queue.Ticket
	for i := range 3000 {
		if i == 1000 {
			f.room(t, room, func(s *queue.Settings) { longest(s); s.Paused = true })
		}
		tickets = append(tickets, f.enter(t, room, queue.VisitorIdentity(fmt.Sprintf("c%d", i))))
	}
	f.clock.Advance(time.Hour) // an hour's wait in the admitted records
	f.room(t, room, longest)
	if r := f.tick(t, room); len(r.Admitted) != 2000 {
		t.Fatalf("admitted %d, want the 2000 waiting", len(r.Admitted))
	}
	for _, tk := range tickets[:300] {
		if err := f.line.Leave(ctx, room, tk.ID, tk.Identity); err != nil {
			t.Fatal(err)
		}
	}
	for _, tk := range tickets[2000:2300] {
		if err := f.store.Complete(ctx, room, tk.ID, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	f.room(t, room, func(s *queue.Settings) { longest(s); s.Paused = true })
	for i := range 2000 { // and waiters behind them, at entry positions of four digits
		f.enter(t, room, queue.VisitorIdentity(fmt.Sprintf("w%d", i)))
	}
	keys, err := rdb.Keys(ctx, prefix+"{"+room+"}:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	buckets := 0
	for _, k := range keys {
		name := strings.TrimPrefix(k, prefix+"{"+room+"}:")
		if !strings.HasPrefix(name, "t:") && !strings.HasPrefix(name, "s:") && !strings.HasPrefix(name, "v:") {
			continue
		}
		buckets++
		enc, err := rdb.ObjectEncoding(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if enc != "listpack" {
			vals, _ := rdb.HVals(ctx, k).Result()
			longestVal := 0
			for _, v := range vals {
				longestVal = max(longestVal, len(v))
			}
			t.Fatalf("%s is a %s: %d entries, longest value %d B", name, enc, len(vals), longestVal)
		}
	}
	if buckets < 80 {
		t.Fatalf("%d buckets, want ≥ 80 (40 t:, 20 s:, 100 v:)", buckets)
	}
}

// TestAStoppedServersSnapshotGoes: a server's snapshot that saves nobody
// any more (older than abandon_after_s) and is older than 10 minutes is
// deleted by a tick, its bitmap with it; a live one stays.
func TestAStoppedServersSnapshotGoes(t *testing.T) {
	needRealRedis(t)
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	const room = "snap"
	f.room(t, room, func(s *queue.Settings) { s.Paused = true })
	w := f.stuff(t, room, "w", 3)
	if err := f.store.Present(ctx, room, "stopped", []string{w[0].ID}, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	bits := prefix + "{" + room + "}:pr:stopped"
	for _, step := range []time.Duration{9 * time.Minute, 2 * time.Minute} {
		f.clock.Advance(step)
		if err := f.store.Present(ctx, room, "live", []string{w[1].ID, w[2].ID}, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
		f.tick(t, room)
		n, err := rdb.Exists(ctx, bits).Result()
		if err != nil {
			t.Fatal(err)
		}
		if gone := step == 2*time.Minute; (n == 0) != gone { // 11 minutes: gone
			t.Fatalf("after %v more: the stopped server's bitmap exists %d, want gone %v", step, n, gone)
		}
	}
	servers, err := rdb.HKeys(ctx, prefix+"{"+room+"}:pr").Result()
	if err != nil || len(servers) != 1 || servers[0] != "live" {
		t.Fatalf("snapshots left: %v %v, want live's", servers, err)
	}
}

// TestAWideSnapshotIsReadByRange: a snapshot whose seqs span more than a
// 64 KiB bitmap is read by range (GETBIT each for a chunk spread as wide),
// not whole, and still keeps its waiters; a silent waiter beside them goes.
func TestAWideSnapshotIsReadByRange(t *testing.T) {
	needRealRedis(t)
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	const room = "wide"
	f.room(t, room, func(s *queue.Settings) { s.Paused = true; s.AbandonAfterS = 30 })
	first := f.stuff(t, room, "a", 1)[0]
	if err := rdb.Set(ctx, prefix+"{"+room+"}:seq", 600_000, 0).Err(); err != nil {
		t.Fatal(err)
	}
	late := f.stuff(t, room, "b", 2) // seqs 600,001 and 600,002
	open := []string{first.ID, late[0].ID}
	f.clock.Advance(35 * time.Second)
	if err := f.store.Present(ctx, room, "a", open, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.StrLen(ctx, prefix+"{"+room+"}:pr:a").Result(); err != nil || n <= 65536 {
		t.Fatalf("bitmap of %d B (%v), want over 64 KiB", n, err)
	}
	if r := f.tick(t, room); r.Abandoned != 1 { // seqs 1 to 600,002 in one chunk: GETBIT each
		t.Fatalf("abandoned %d, want the silent one", r.Abandoned)
	}
	// Without the first, the chunk is narrow: one GETRANGE.
	if err := f.line.Leave(ctx, room, first.ID, first.Identity); err != nil {
		t.Fatal(err)
	}
	f2 := f.stuff(t, room, "c", 1)[0] // silent, entered 35 s after the others
	f.clock.Advance(31 * time.Second)
	if err := f.store.Present(ctx, room, "a", open, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if r := f.tick(t, room); r.Abandoned != 1 {
		t.Fatalf("abandoned %d, want the second silent one", r.Abandoned)
	}
	if got, _, _ := f.line.Status(ctx, room, f2.ID, f2.Identity); got.Reason != "abandoned" {
		t.Fatalf("silent: %s %s", got.State, got.Reason)
	}
	for _, tk := range []queue.Ticket{late[0]} {
		got, _, err := f.line.Status(ctx, room, tk.ID, tk.Identity)
		if err != nil || got.State != vocab.StateWaiting {
			t.Fatalf("%s in the snapshot: %s (%v)", tk.ID, got.State, err)
		}
	}
}
