package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAccept measures durable accepts from many concurrent callers
// (the HTTP handlers), each returning after its COMMIT.
func BenchmarkAccept(b *testing.B) {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), FileName), SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	payload := json.RawMessage(`{"sku":"sneaker-42","qty":1,"note":"benchmark intent of a typical size"}`)
	var (
		next atomic.Int64
		mu   sync.Mutex
		lats []time.Duration
	)
	b.SetParallelism(32) // many handlers wait on one fsync at once
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		ctx := context.Background()
		for pb.Next() {
			v := fmt.Sprintf("visitor-%d", next.Add(1))
			t0 := time.Now()
			if _, _, err := s.Accept(ctx, "bench", v, payload); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lats = append(lats, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lats)
	if len(lats) > 0 {
		b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "intents/s")
		b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
	}
}
