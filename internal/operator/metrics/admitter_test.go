package metrics_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// TestAdmitterLeasesCountsTheRoomsThisServerAdmits: two servers' admitters
// share a store with two rooms; each room is admitted by one of them, so
// their gauges add up to two, and a server whose admitter stopped admits none.
func TestAdmitterLeasesCountsTheRoomsThisServerAdmits(t *testing.T) {
	store := memstore.New()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	line := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	for _, room := range []string{"sale", "drop"} {
		if err := line.PutRoom(ctx, room, queue.DefaultSettings()); err != nil {
			t.Fatal(err)
		}
	}
	var total float64
	for i := range 2 {
		adm := queue.NewAdmitter(queue.NewLine(store, keys, queue.LineOptions{Clock: clock}))
		_, reg := newMetrics(t, metrics.Sources{Admitter: adm})
		wg.Go(func() { _ = adm.Run(ctx) })
		// Its list loop and both room loops wait on the clock once they leased.
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		err := clock.BlockUntilContext(wctx, 3*(i+1))
		wcancel()
		if err != nil {
			t.Fatalf("server %d's loops never waited: %v", i, err)
		}
		v, ok := value(t, reg, "waitroom_admitter_leases")
		if !ok {
			t.Fatalf("server %d: no waitroom_admitter_leases", i)
		}
		total += v
	}
	if total != 2 {
		t.Fatalf("rooms admitted by the two servers: %v, want 2", total)
	}

	_, reg := newMetrics(t, metrics.Sources{})
	if _, ok := value(t, reg, "waitroom_admitter_leases"); ok {
		t.Fatal("waitroom_admitter_leases without an admitter")
	}
}
