package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// BenchmarkEnterWithClientLimits is what the per-client limits add to an
// enter: new visitors from 1000 addresses, limits off and on.
//
//	go test ./queue/ -run XXX -bench EnterWithClientLimits -benchtime 3000x
func BenchmarkEnterWithClientLimits(b *testing.B) {
	for _, c := range []struct {
		name string
		bp   queue.BotProtection
	}{
		{"off", queue.BotProtection{ProofOfWork: queue.ProofOfWorkOff}},
		{"on", queue.BotProtection{ProofOfWork: queue.ProofOfWorkOff, EntersPerIPPerMinute: 1_000_000, PlacesPerIP: 1_000_000}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newBenchLine(b, nil)
			ctx := context.Background()
			s := queue.DefaultSettings()
			s.Paused, s.BotProtection = true, c.bp
			if err := f.line.PutRoom(ctx, "bench", s); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				id := "v:" + strconv.Itoa(i)
				bucket := "10.0." + strconv.Itoa(i%1000/250) + "." + strconv.Itoa(i%250)
				if err := f.line.LimitClient(ctx, "bench", &s, bucket, id); err != nil {
					b.Fatal(err)
				}
				if _, _, err := f.line.Enter(ctx, "bench", id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
