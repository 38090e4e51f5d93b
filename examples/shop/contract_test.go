package shop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/outbox"
)

// TestWaitroomOutboxAndShopAgree: the message contract end to end. Waitroom's
// own outbox accepts intents, relays them to Kafka and applies the answers;
// the shop's consumer sells from its store in between. Every intent ends
// processed or rejected in the outbox as the shop decided.
func TestWaitroomOutboxAndShopAgree(t *testing.T) {
	t.Parallel()
	const n, stock = 12, 8
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	brokers := startBroker(t)

	var changed atomic.Int64
	finished := make(chan struct{})
	ob, err := outbox.Open(outbox.Config{Dir: t.TempDir(), Brokers: brokers,
		IntentsTopic: intentsTopic, ResultsTopic: resultsTopic, ResultsGroup: "waitroom-" + t.Name(),
		Logger: testLogger(t),
		OnApply: func(_, c int) {
			if changed.Add(int64(c)) == n+1 {
				close(finished)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n + 1 {
		payload := fmt.Sprintf(`{"product":%q,"quantity":1}`, shop.DropID)
		if i == n {
			payload = fmt.Sprintf(`{"product":%q,"quantity":7}`, shop.DropID)
		}
		in, created, err := ob.Accept(ctx, "demo", fmt.Sprintf("v%02d", i), json.RawMessage(payload))
		if err != nil || !created {
			t.Fatalf("accept %d: %v %v", i, created, err)
		}
		ids = append(ids, in.ID)
	}

	st := openDropStore(t, stock)
	c := newConsumer(t, st, brokers, shop.ConsumerConfig{BatchSize: 5, Interval: time.Millisecond})
	stopShop := runConsumer(t, c)
	octx, stopOutbox := context.WithCancel(ctx)
	relayed := make(chan error, 1)
	go func() { relayed <- ob.Run(octx) }()
	select {
	case <-finished:
	case <-ctx.Done():
		t.Fatalf("outbox finished %d of %d intents; shop %+v", changed.Load(), n+1, c.Stats())
	}
	stopOutbox()
	if err := <-relayed; err != nil {
		t.Fatal(err)
	}
	stopShop()
	defer ob.Close()

	processed := 0
	for i, id := range ids {
		in, err := ob.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want := outbox.StatusProcessed
		switch {
		case i == n:
			want = outbox.StatusRejected
			if in.Reason != shop.ReasonInvalidPayload {
				t.Errorf("bad quantity rejected for %q", in.Reason)
			}
		case in.Status == outbox.StatusRejected && in.Reason == shop.ReasonSoldOut:
			want = outbox.StatusRejected
		default:
			processed++
		}
		if in.Status != want {
			t.Errorf("intent %d: %s %q, want %s", i, in.Status, in.Reason, want)
		}
	}
	if sold, _ := st.Sold(ctx, shop.DropID); processed != stock || sold != stock {
		t.Fatalf("outbox says %d processed, shop sold %d; want %d", processed, sold, stock)
	}
}
