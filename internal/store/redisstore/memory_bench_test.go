package redisstore_test

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

const memoryWaiters = 10_000

// BenchmarkWaiterMemory fills a paused room with 10,000 waiters through the
// real enter script (cookie visitors' identities), on a redis-server of its
// own, each with a sign of life (Alive, as from an open socket), and
// reports Redis's used_memory growth per waiter (bytes/waiter; the fill's
// connections closed before each reading) and, per key of the room, MEMORY USAGE per waiter (<key>-B/waiter; the
// buckets t:<n>, s:<n>, v:<n> add up by kind). Run it with
// -benchtime=1x: each round fills a room of its own.
func BenchmarkWaiterMemory(b *testing.B) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server is not on PATH")
	}
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1})
	b.Cleanup(func() { _ = rdb.Close() })
	keys, err := token.Generate()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// fill enters n waiters over connections of their own, closed before it
	// returns: used_memory then holds no client buffers of the fill (64
	// connections hold ~1 MB, ~100 B a waiter at 10,000, that no key holds).
	var next int64
	fill := func(room string, n int) {
		fr := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 64})
		f := &benchLine{rdb: fr, line: queue.NewLine(redisstore.New(fr, "wr:"), keys,
			queue.LineOptions{Jitter: func(max time.Duration) time.Duration { return max / 2 }}),
			// As a cookie visitor's: "v:" and 32 hex.
			ident: func(n int64) string { return queue.VisitorIdentity(strconv.FormatInt(n, 10)) },
			// Each from an address of its own, as the handlers name it.
			network: func(n int64) string { return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255) }}
		f.next.Store(next)
		if n == 0 {
			pausedRoom(b, f, room)
		} else {
			tickets, err := f.fill(ctx, room, n)
			if err != nil {
				b.Fatal(err)
			}
			// Every waiter shows a sign of life, as open sockets do
			// (queue.Line.Alive): a waiter's steady state.
			ids := make([]string, len(tickets))
			for i, t := range tickets {
				ids[i] = t.ID
			}
			if err := redisstore.New(fr, "wr:").Alive(ctx, room, ids, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
		next = f.next.Load()
		_ = fr.Close()
		// The server drops the closed connections on its own time: await it.
		deadline := time.Now().Add(30 * time.Second)
		for infoField(b, rdb, "clients", "connected_clients") != "1" {
			if time.Now().After(deadline) {
				b.Fatalf("connected clients still %s", infoField(b, rdb, "clients", "connected_clients"))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	var grown int64
	perKey := map[string]int64{}
	b.ResetTimer()
	for i := range b.N {
		room := "mem" + strconv.Itoa(i)
		fill(room, 0)
		fill(room, 1) // the room's fixed keys
		before := usedMemory(b, rdb)
		fill(room, memoryWaiters)
		grown += usedMemory(b, rdb) - before
		for _, k := range scanKeys(b, rdb, "wr:{"+room+"}:*") {
			n, err := rdb.MemoryUsage(ctx, k, 0).Result()
			if err != nil {
				b.Fatal(err)
			}
			name := strings.TrimPrefix(k, "wr:{"+room+"}:")
			if j := strings.IndexByte(name, ':'); j >= 0 {
				name = name[:j] // buckets of one kind count together
			}
			perKey[name] += n
		}
	}
	b.StopTimer()
	waiters := float64(b.N * memoryWaiters)
	b.ReportMetric(float64(grown)/waiters, "bytes/waiter")
	names := make([]string, 0, len(perKey))
	for k := range perKey {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if v := float64(perKey[k]) / waiters; v >= 1 {
			b.ReportMetric(v, k+"-B/waiter")
		}
	}
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	b.Helper()
	v := infoField(b, rdb, "memory", "used_memory")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		b.Fatalf("used_memory %q: %v", v, err)
	}
	return n
}

func scanKeys(b *testing.B, rdb *redis.Client, match string) []string {
	b.Helper()
	var out []string
	iter := rdb.Scan(context.Background(), 0, match, 1000).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}
