package shop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
)

// TestTenThousandIntentsAcrossFaults: 10,000 intents go through waitroom's
// real outbox, Kafka (the test broker) and the demo shop's real consumer and
// SQLite orders, while the broker is stopped and restarted and the outbox is
// closed and reopened (a crash between accept and publish). Nothing accepted
// is lost and nothing is sold twice: accepted = processed + rejected in the
// outbox, processed = the shop's orders, and the stock is never oversold.
func TestTenThousandIntentsAcrossFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 intents")
	}
	n, stock := 10_000, 6_000
	if testkit.Race {
		n, stock = 2_000, 1_200 // the same faults on fewer intents: -race slows each ~10×
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	broker := kafkatest.Start(t, intentsTopic, resultsTopic)
	dir := t.TempDir()
	var finished atomic.Int64
	open := func() *outbox.Outbox {
		ob, err := outbox.Open(outbox.Config{Dir: dir, Brokers: broker.Addrs(),
			IntentsTopic: intentsTopic, ResultsTopic: resultsTopic, ResultsGroup: "waitroom-load",
			RetryInterval: time.Second, Logger: testLogger(t),
			OnApply: func(_, c int) { finished.Add(int64(c)) }})
		if err != nil {
			t.Fatal(err)
		}
		return ob
	}
	accept := func(ob *outbox.Outbox, from, to int) {
		var wg sync.WaitGroup
		work := make(chan int)
		for range 32 {
			wg.Go(func() {
				for i := range work {
					payload := json.RawMessage(fmt.Sprintf(`{"product":%q,"quantity":1}`, shop.DropID))
					if _, _, err := ob.Accept(ctx, "demo", fmt.Sprintf("v%05d", i), payload); err != nil {
						t.Errorf("accept %d: %v", i, err)
						return
					}
				}
			})
		}
		for i := from; i < to; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
	}

	st := openDropStore(t, stock)
	stopShop := runConsumer(t, newConsumer(t, st, broker.Addrs(), shop.ConsumerConfig{BatchSize: 500, Interval: time.Millisecond}))

	// First third: accepted while the outbox never runs, then "crash".
	ob := open()
	accept(ob, 0, n/3)
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened and running; the broker goes down for the second third.
	ob = open()
	octx, stopOutbox := context.WithCancel(ctx)
	relayed := make(chan error, 1)
	go func() { relayed <- ob.Run(octx) }()
	broker.Stop()
	accept(ob, n/3, 2*n/3)
	broker.Restart()
	accept(ob, 2*n/3, n)

	for finished.Load() < int64(n) {
		select {
		case <-ctx.Done():
			counts, _ := ob.Counts(context.Background())
			t.Fatalf("finished %d of %d: outbox %+v", finished.Load(), n, counts)
		case <-time.After(100 * time.Millisecond): // results arrive from other goroutines in batches
		}
	}
	stopOutbox()
	if err := <-relayed; err != nil {
		t.Fatal(err)
	}
	stopShop()
	counts, err := ob.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = ob.Close()
	sold, err := st.Sold(context.Background(), shop.DropID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("outbox %+v; shop sold %d of %d", counts, sold, stock)
	if counts.Total() != int64(n) || counts.Processed+counts.Rejected != int64(n) {
		t.Fatalf("outbox %+v: want all %d accepted intents processed or rejected", counts, n)
	}
	if counts.Processed != int64(sold) || sold != stock {
		t.Fatalf("outbox processed %d, shop sold %d, stock %d: want them equal", counts.Processed, sold, stock)
	}
}
