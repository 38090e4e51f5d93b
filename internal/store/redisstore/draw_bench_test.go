package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/queue"
)

// BenchmarkDraw times one scheduled opening's draw on a real redis-server:
// read the pre-queue, shuffle it with crypto/rand, and the one draw.lua
// call that places everyone. The script runs as one atomic step, so its
// time is how long Redis serves nobody else at the opening.
func BenchmarkDraw(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
				bl := newBenchLine(b, clock)
				s := queue.DefaultSettings()
				opens := clock.Now().Add(time.Minute)
				s.OpensAt, s.Paused = &opens, true
				ctx := context.Background()
				room := fmt.Sprintf("draw-%d", i)
				if err := bl.line.PutRoom(ctx, room, s); err != nil {
					b.Fatal(err)
				}
				var g errgroup.Group
				g.SetLimit(32)
				for j := 0; j < n; j++ {
					g.Go(func() error {
						_, _, err := bl.line.Enter(ctx, room, fmt.Sprintf("v:%d", j))
						return err
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				clock.Advance(time.Minute)
				b.StartTimer()
				if _, err := bl.line.Tick(ctx, room, &s); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if rec, ok, err := bl.line.LastDraw(ctx, room); err != nil || !ok || rec.Drawn != int64(n) {
					b.Fatalf("draw of %d: %+v %v %v", n, rec, ok, err)
				}
			}
		})
	}
}
