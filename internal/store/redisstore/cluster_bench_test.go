package redisstore_test

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// BenchmarkClusterEnter is BenchmarkEnter on a 3-master Redis Cluster, with
// the enters of one room (one shard does all the Redis work) or spread
// round-robin over 3 rooms, one per shard. Besides enters/s, which on a
// small machine the client's own CPU bounds, it reports the busiest shard's
// share of the enter scripts, its CPU time per enter (INFO cpu: unlike the
// scripts' wall time, not inflated by a busy machine keeping it waiting),
// and the ceiling that sets: what the cluster would take if each shard had
// a core to itself.
func BenchmarkClusterEnter(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("rooms=%d", n), func(b *testing.B) { benchClusterEnter(b, n) })
	}
}

func benchClusterEnter(b *testing.B, rooms int) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server is not on PATH")
	}
	c := redistest.SharedCluster(b)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), PoolSize: 64})
	b.Cleanup(func() { _ = cc.Close() })
	nodes := c.NodeClients(b)
	keys, err := token.Generate()
	if err != nil {
		b.Fatal(err)
	}
	line := queue.NewLine(redisstore.New(cc, redistest.Prefix(b)), keys,
		queue.LineOptions{Jitter: func(max time.Duration) time.Duration { return max / 2 }})
	ctx := context.Background()

	names := roomsOnShards(b, cc, c.Addrs())[:rooms]
	s := queue.DefaultSettings()
	s.Paused, s.AbandonAfterS, s.JitterMS = true, 86_400, 0
	var next atomic.Int64
	for _, room := range names {
		if err := line.PutRoom(ctx, room, s); err != nil {
			b.Fatal(err)
		}
		if _, _, err := line.Enter(ctx, room, "v:warm-"+room); err != nil { // loads the script on the shard
			b.Fatal(err)
		}
	}
	calls0, cpu0 := make([]int64, len(nodes)), make([]time.Duration, len(nodes))
	for i, n := range nodes {
		if calls0[i], _, err = scriptStats(ctx, n); err != nil {
			b.Fatal(err)
		}
		cpu0[i] = redisCPU(b, n)
	}
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			room := names[i%int64(len(names))]
			if _, _, err := line.Enter(ctx, room, "v:"+strconv.FormatInt(i, 10)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	var busiest time.Duration
	var mostCalls int64
	for i, n := range nodes {
		calls, _, err := scriptStats(ctx, n)
		if err != nil {
			b.Fatal(err)
		}
		busiest = max(busiest, redisCPU(b, n)-cpu0[i])
		mostCalls = max(mostCalls, calls-calls0[i])
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "enters/s")
	b.ReportMetric(100*float64(mostCalls)/float64(b.N), "busiest-shard-%calls")
	b.ReportMetric(float64(busiest.Microseconds())/float64(b.N), "busiest-shard-cpu-us/op")
	if busiest > 0 {
		b.ReportMetric(float64(b.N)/busiest.Seconds(), "shard-bound-enters/s")
	}
}

// roomsOnShards names one room per master, in the order of addrs.
func roomsOnShards(tb testing.TB, cc *redis.ClusterClient, addrs []string) []string {
	tb.Helper()
	ctx := context.Background()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		tb.Fatal(err)
	}
	rooms := make([]string, len(addrs))
	for i := 0; slices.Contains(rooms, ""); i++ {
		if i > 1000 {
			tb.Fatalf("1000 rooms and still a master without one: %v", rooms)
		}
		room := fmt.Sprintf("bench-%d", i)
		slot, err := cc.ClusterKeySlot(ctx, "{"+room+"}").Result()
		if err != nil {
			tb.Fatal(err)
		}
		for _, s := range slots {
			if m := slices.Index(addrs, s.Nodes[0].Addr); m >= 0 && int64(s.Start) <= slot && slot <= int64(s.End) && rooms[m] == "" {
				rooms[m] = room
			}
		}
	}
	return rooms
}
