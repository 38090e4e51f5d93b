package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
)

// benchPayload is a checkout intent of a typical size (about 100 bytes).
var benchPayload = json.RawMessage(`{"sku":"sneaker-42","size":"EU 43","qty":1,"note":"a checkout intent of a typical size"}`)

// BenchmarkAccept measures durable accepts from many concurrent callers, as
// HTTP handlers make them: each returns after the COMMIT (fsync) that holds
// its intent. Reports throughput and the p50 and p99 of one Accept.
func BenchmarkAccept(b *testing.B) {
	// Concurrent callers = parallelism x GOMAXPROCS: from a trickle to a rush.
	for _, par := range []int{1, 4, 32, 128} {
		b.Run(fmt.Sprintf("callers=%d", par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			benchmarkAccept(b, par)
		})
	}
}

func benchmarkAccept(b *testing.B, parallelism int) {
	s := openStore(b, dbPath(b))
	var (
		next atomic.Int64
		mu   sync.Mutex
		lats = make([]time.Duration, 0, b.N)
	)
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		mine := make([]time.Duration, 0, 1024)
		ctx := context.Background()
		for pb.Next() {
			v := fmt.Sprintf("visitor-%d", next.Add(1))
			t0 := time.Now()
			if _, _, err := s.Accept(ctx, "bench", v, benchPayload); err != nil {
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
	reportLatency(b, len(lats), elapsed, lats)
}

// BenchmarkRelay measures publishing: b.N pending intents go to the broker
// (acks from all in-sync replicas) and are marked published.
func BenchmarkRelay(b *testing.B) {
	ctx := context.Background()
	br := startBroker(b)
	s := openStore(b, dbPath(b))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 64 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if _, _, err := s.Accept(ctx, "bench", fmt.Sprintf("visitor-%d", i), benchPayload); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	relay := outbox.NewRelay(s, newPublisher(b, br), outbox.RelayConfig{Logger: quiet})
	b.ResetTimer()
	start := time.Now()
	n, err := relay.Flush(ctx)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil || n != b.N {
		b.Fatalf("flush published %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "intents/s")
}

func reportLatency(b *testing.B, n int, elapsed time.Duration, lats []time.Duration) {
	if n == 0 {
		return
	}
	slices.Sort(lats)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(float64(n)/elapsed.Seconds(), "intents/s")
	b.ReportMetric(ms(lats[n/2]), "p50-ms")
	b.ReportMetric(ms(lats[n*99/100]), "p99-ms")
}
