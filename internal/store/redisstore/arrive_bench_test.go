package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// BenchmarkArrive is the gate's check of a slot per request, over 1,000
// admitted tickets, 32 in flight per GOMAXPROCS: the read-only check
// (active.lua, as before arrivals were kept), and arrive.lua without and
// with idle_after_s (30 s: a write per visitor per 7.5 s at most, so
// nearly every call of a benchmark this short writes nothing).
func BenchmarkArrive(b *testing.B) {
	for _, c := range []struct {
		how  string
		idle time.Duration
	}{{"active", -1}, {"arrive", 0}, {"arrive_idle", 30 * time.Second}} {
		b.Run(c.how, func(b *testing.B) {
			f := newBenchLine(b, nil)
			b.Cleanup(func() { _ = f.rdb.Close() })
			s := queue.DefaultSettings()
			s.Activation, s.Capacity, s.JitterMS = queue.ActivationOff, 10_000, 0
			if err := f.line.PutRoom(context.Background(), "arrive", s); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			tickets, err := f.fill(ctx, "arrive", 1_000)
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
					var ok bool
					var err error
					if c.idle < 0 {
						ok, _, err = f.store.Active(ctx, "arrive", t.ID, time.Now())
					} else {
						ok, _, err = f.store.Arrive(ctx, "arrive", t.ID, time.Now(), c.idle)
					}
					if err != nil || !ok {
						b.Errorf("ticket %s: %v %v", t.ID, ok, err)
						return
					}
				}
			})
		})
	}
}
