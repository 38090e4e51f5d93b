package history_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// BenchmarkRoomDayMemory fills one room-day as a busy sale would (a reading
// every minute, waits in 8 buckets, challenges issued and solved, every
// minute) and reports Redis's MEMORY USAGE of it. Figures: docs/benchmarks.md.
func BenchmarkRoomDayMemory(b *testing.B) {
	b.Run("busy", func(b *testing.B) { roomDay(b, 8) })
	b.Run("readings-only", func(b *testing.B) { roomDay(b, 0) })
}

// roomDay fills a room-day with buckets wait buckets a minute (none: the
// readings alone, as of a room nobody entered).
func roomDay(b *testing.B, buckets int) {
	ctx := context.Background()
	rdb := redistest.Shared(b).Client(b)
	for range b.N {
		prefix := redistest.Prefix(b)
		h := history.New(rdb, prefix, 0, nil)
		day := time.Now().UTC().Truncate(24 * time.Hour)
		for m := range 1440 {
			at := day.Add(time.Duration(m) * time.Minute)
			r := history.Reading{Waiting: 52_100 + int64(m), Active: 400, Entered: 61_000 + int64(m)*50,
				Admitted: int64(m) * 40, Abandoned: int64(m) * 3, Expired: int64(m), Completed: int64(m) * 35}
			if _, err := h.Record(ctx, "sale", at, r); err != nil {
				b.Fatal(err)
			}
			for w := range buckets {
				h.ObserveWaits("sale", at, time.Duration(m+w*60)*time.Second)
			}
			if buckets > 0 {
				h.Add("sale", at, history.ChallengesIssued, 420)
				h.Add("sale", at, history.ChallengesSolved, 410)
			}
			if err := h.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		key := prefix + "{sale}:history:" + day.Format("20060102")
		n, err := rdb.MemoryUsage(ctx, key).Result()
		if err != nil {
			b.Fatal(err)
		}
		fields, _ := rdb.HLen(ctx, key).Result()
		b.ReportMetric(float64(n), "bytes/room-day")
		b.ReportMetric(float64(fields), "fields/room-day")
		rdb.Del(ctx, key)
	}
}
