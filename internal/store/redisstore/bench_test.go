package redisstore_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// The benchmarks measure a real redis-server: miniredis's timings say
// nothing about production, so they skip without one.
func benchRedis(b *testing.B) *redistest.Server {
	b.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server is not on PATH")
	}
	return redistest.Shared(b)
}

type benchLine struct {
	line  *queue.Line
	rdb   *redis.Client
	clock *clockwork.FakeClock
	next  atomic.Int64 // identities handed out so far
	// ident makes the nth identity; nil: "v:<n>".
	ident func(n int64) string
	// network is the nth enter's client network, as the handlers pass it
	// (queue.EntryProof); nil: none known.
	network func(n int64) string
	// prefix is the line's key prefix.
	prefix string
	store  *redisstore.Store
}

// newBenchLine is a line on its own prefix. Its client lives as long as the
// test binary, because a fixture outlives the b.N rounds of one benchmark.
func newBenchLine(b *testing.B, clock *clockwork.FakeClock) *benchLine {
	b.Helper()
	srv := benchRedis(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 64})
	keys, err := token.Generate()
	if err != nil {
		b.Fatal(err)
	}
	opts := queue.LineOptions{Jitter: func(max time.Duration) time.Duration { return max / 2 }}
	if clock != nil {
		opts.Clock = clock
	}
	prefix := redistest.Prefix(b)
	store := redisstore.New(rdb, prefix)
	return &benchLine{line: queue.NewLine(store, keys, opts), store: store, rdb: rdb, clock: clock, prefix: prefix}
}

// fill enters n new visitors, 32 at a time: concurrency stands in for a
// pipeline while still going through the real enter script.
func (f *benchLine) fill(ctx context.Context, room string, n int) ([]queue.Ticket, error) {
	out := make([]queue.Ticket, n)
	var idx atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	for range 32 {
		g.Go(func() error {
			for {
				i := idx.Add(1) - 1
				if i >= int64(n) {
					return nil
				}
				n := f.next.Add(1)
				who := "v:" + strconv.FormatInt(n, 10)
				if f.ident != nil {
					who = f.ident(n)
				}
				var proof queue.EntryProof
				if f.network != nil {
					proof.Network = f.network(n)
				}
				t, _, err := f.line.EnterWith(ctx, room, who, proof)
				if err != nil {
					return err
				}
				out[i] = t
			}
		})
	}
	return out, g.Wait()
}

// scriptCommands are the commands a store's script call is counted under:
// FCALL where Redis has functions, else EVALSHA.
var scriptCommands = []string{"fcall", "evalsha"}

// scriptStats reads the script calls (FCALL and EVALSHA) and microseconds
// Redis has counted.
func scriptStats(ctx context.Context, rdb *redis.Client) (calls, usec int64, err error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, 0, fmt.Errorf("info commandstats: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		for _, name := range scriptCommands {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+name+":")
			if !ok {
				continue
			}
			for _, kv := range strings.Split(rest, ",") {
				k, v, _ := strings.Cut(kv, "=")
				n, _ := strconv.ParseInt(v, 10, 64)
				switch k {
				case "calls":
					calls += n
				case "usec":
					usec += n
				}
			}
		}
	}
	return calls, usec, nil
}

const tickWaiters = 100_000

type tickBench struct {
	once     sync.Once
	f        *benchLine
	settings queue.Settings
	err      error
}

var tick100k, tick100kRandom, tick100kAlive tickBench

// BenchmarkTick100k measures one admission tick (batch 10) of a room with
// 100,000 waiters. The clock moves one batch interval per tick, so every tick
// has a fresh budget and admits 10; sessions expire after a minute, so from
// then on every tick also reclaims about 10 slots, as in a steady sale.
// redis-us/tick is the script's own time inside Redis (INFO commandstats),
// which is what the single-threaded Redis spends on it; ns/op adds the
// client and the round trip.
func BenchmarkTick100k(b *testing.B) { benchTick100k(b, "tick100k", queue.MethodFIFO, &tick100k) }

// BenchmarkTick100kAlive is BenchmarkTick100k with a sign of life from every
// waiter (Alive, as from open sockets), so the tick's abandon sweep has a
// last sign of life to read for each waiter it looks at.
func BenchmarkTick100kAlive(b *testing.B) {
	benchTick100k(b, "tick100k-alive", queue.MethodFIFO, &tick100kAlive)
}

// BenchmarkTick100kRandom is BenchmarkTick100k in a random line: each of the
// 10 admissions is a draw among the 100,000 (ZRANGE by rank, ZREM).
func BenchmarkTick100kRandom(b *testing.B) {
	benchTick100k(b, "tick100k-random", queue.MethodRandom, &tick100kRandom)
}

func benchTick100k(b *testing.B, room string, method queue.Method, tick100k *tickBench) {
	ctx := context.Background()
	tick100k.once.Do(func() {
		f := newBenchLine(b, clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
		s := queue.DefaultSettings()
		s.BatchSize, s.BatchIntervalMS, s.Capacity = 10, 200, 1_000_000
		s.SessionTTLS, s.AbandonAfterS = 60, 86_400
		s.QueueingMethod = method
		if err := f.line.PutRoom(ctx, room, s); err != nil {
			tick100k.err = err
			return
		}
		start := time.Now()
		tickets, err := f.fill(ctx, room, tickWaiters)
		if err != nil {
			tick100k.err = err
			return
		}
		b.Logf("filled %d waiters in %v", tickWaiters, time.Since(start).Round(time.Millisecond))
		if tick100k == &tick100kAlive {
			ids := make([]string, len(tickets))
			for i, t := range tickets {
				ids[i] = t.ID
			}
			if err := redisstore.New(f.rdb, f.prefix).Alive(ctx, room, ids, f.clock.Now()); err != nil {
				tick100k.err = err
				return
			}
		}
		// One tick up front loads the script, so the timed ones all find it loaded.
		if _, err := f.line.Tick(ctx, room, &s); err != nil {
			tick100k.err = err
			return
		}
		tick100k.f, tick100k.settings = f, s
	})
	if tick100k.err != nil {
		b.Fatal(tick100k.err)
	}
	f, s := tick100k.f, tick100k.settings
	waiting := func() int64 {
		st, err := f.line.Stats(ctx, room, f.clock.Now())
		if err != nil {
			b.Fatal(err)
		}
		return st.Waiting
	}

	// Refills are script calls too, so Redis time is summed only over the
	// stretches of ticks between refills.
	const refillEvery = 100
	var calls, usec, admitted int64
	var baseCalls, baseUsec int64
	sample := func() {
		c, u, err := scriptStats(ctx, f.rdb)
		if err != nil {
			b.Fatal(err)
		}
		calls += c - baseCalls
		usec += u - baseUsec
	}
	rebase := func() {
		var err error
		if baseCalls, baseUsec, err = scriptStats(ctx, f.rdb); err != nil {
			b.Fatal(err)
		}
	}
	refill := func() {
		if n := tickWaiters - waiting(); n > 0 {
			if _, err := f.fill(ctx, room, int(n)); err != nil {
				b.Fatal(err)
			}
		}
	}
	refill()
	rebase()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%refillEvery == 0 {
			b.StopTimer()
			sample()
			refill()
			rebase()
			b.StartTimer()
		}
		f.clock.Advance(time.Duration(s.BatchIntervalMS) * time.Millisecond)
		r, err := f.line.Tick(ctx, room, &s)
		if err != nil {
			b.Fatal(err)
		}
		admitted += int64(len(r.Admitted))
	}
	b.StopTimer()
	sample()
	if calls != int64(b.N) {
		b.Fatalf("redis counted %d script calls for %d ticks: something else ran scripts", calls, b.N)
	}
	b.ReportMetric(float64(usec)/float64(b.N), "redis-us/tick")
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/tick")
	b.ReportMetric(float64(waiting()), "waiting")
}

// reportRedisTime reports the Redis time of each op's script when the
// returned func runs; nothing else may run scripts meanwhile. It resets
// Redis's statistics first, then reports per op: redis-us/op, the scripts'
// wall time over the ops (INFO commandstats: what issue 13 asks for, and
// what a loaded machine inflates whenever Redis is descheduled mid-script);
// redis-cpu-us/op, redis-server's CPU time (INFO cpu, user + sys, network
// included) over the ops; ops/call, as enters share calls. And per call:
// redis-call-p50-us and -p99-us (INFO latencystats; the median is robust to
// those stalls).
func reportRedisTime(b *testing.B, rdb *redis.Client) func() {
	b.Helper()
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	cpu0 := redisCPU(b, rdb)
	return func() {
		b.StopTimer()
		calls, usec, err := scriptStats(ctx, rdb)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(usec)/float64(b.N), "redis-us/op")
		b.ReportMetric(float64(b.N)/float64(max(calls, 1)), "ops/call")
		b.ReportMetric(scriptPercentile(b, rdb, "p50"), "redis-call-p50-us")
		b.ReportMetric(scriptPercentile(b, rdb, "p99"), "redis-call-p99-us")
		b.ReportMetric(float64((redisCPU(b, rdb)-cpu0).Microseconds())/float64(b.N), "redis-cpu-us/op")
	}
}

// infoField is one numeric field of an INFO section.
func infoField(b *testing.B, rdb *redis.Client, section, field string) string {
	b.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// scriptPercentile is a percentile (p50, p99) of the script call time (µs)
// since the last CONFIG RESETSTAT, of the script command that ran (a
// benchmark runs one kind).
func scriptPercentile(b *testing.B, rdb *redis.Client, p string) float64 {
	for _, name := range scriptCommands {
		v := infoField(b, rdb, "latencystats", "latency_percentiles_usec_"+name)
		for _, kv := range strings.Split(v, ",") {
			if x, ok := strings.CutPrefix(kv, p+"="); ok {
				n, _ := strconv.ParseFloat(x, 64)
				return n
			}
		}
	}
	return 0
}

// pausedRoom keeps every entrant waiting, as the HTTP benchmarks' rooms do.
func pausedRoom(b *testing.B, f *benchLine, room string) {
	b.Helper()
	s := queue.DefaultSettings()
	s.Paused, s.AbandonAfterS, s.JitterMS = true, 86_400, 0
	if err := f.line.PutRoom(context.Background(), room, s); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEnter is one new visitor's enter at the Line level, 32 in flight
// per GOMAXPROCS (about what the HTTP server has at 200 clients on two
// cores, and enters share calls then): the script as a function (FCALL) and
// with EVALSHA; and one enter at a time ("alone": a call each).
func BenchmarkEnter(b *testing.B) {
	for _, c := range []struct {
		how      string
		parallel int
	}{{"function", 32}, {"evalsha", 32}, {"alone", 0}} {
		b.Run(c.how, func(b *testing.B) {
			f := newBenchLine(b, nil)
			b.Cleanup(func() { _ = f.rdb.Close() })
			if c.how == "evalsha" {
				redisstore.EvalshaOnly(f.store)
			}
			pausedRoom(b, f, "enter")
			ctx := context.Background()
			if _, err := f.fill(ctx, "enter", 1); err != nil { // loads the script
				b.Fatal(err)
			}
			enter := func() error {
				_, _, err := f.line.Enter(ctx, "enter", "v:"+strconv.FormatInt(f.next.Add(1), 10))
				return err
			}
			defer reportRedisTime(b, f.rdb)()
			b.ResetTimer()
			if c.parallel == 0 {
				for range b.N {
					if err := enter(); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			b.SetParallelism(c.parallel)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := enter(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkStatus is a waiter's status read at the Line level, over 10,000
// waiters, 64 in flight.
func BenchmarkStatus(b *testing.B) {
	f := newBenchLine(b, nil)
	b.Cleanup(func() { _ = f.rdb.Close() })
	pausedRoom(b, f, "status")
	ctx := context.Background()
	tickets, err := f.fill(ctx, "status", 10_000)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.SetParallelism(32)
	defer reportRedisTime(b, f.rdb)()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t := tickets[next.Add(1)%int64(len(tickets))]
			got, _, err := f.line.Status(ctx, "status", t.ID, t.Identity)
			if err != nil {
				b.Error(err)
				return
			}
			if got.State != vocab.StateWaiting {
				b.Errorf("ticket %s is %s, want waiting", t.ID, got.State)
				return
			}
		}
	})
}
