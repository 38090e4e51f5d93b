package shop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
)

const (
	intentsTopic = "test.intents"
	resultsTopic = "test.results"
)

// startBroker runs waitroom's test broker (kfake, on 127.0.0.1) with the
// intents and results topics, until the test ends.
func startBroker(t *testing.T) []string {
	t.Helper()
	return kafkatest.Start(t, intentsTopic, resultsTopic).Addrs()
}

// startControlledBroker is a kfake cluster of the test's own, for tests that
// intercept requests with its Control hooks.
func startControlledBroker(t *testing.T) (*kfake.Cluster, []string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, intentsTopic, resultsTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()
}

// intent is a message as waitroom writes it.
func intent(id, visitor, payload string) kafka.Message {
	v, _ := json.Marshal(shop.Intent{IntentID: id, Room: "demo", Visitor: visitor,
		Payload: json.RawMessage(payload), AcceptedAt: time.Now().UTC()})
	return kafka.Message{Key: []byte("demo/" + visitor), Value: v,
		Headers: []kafka.Header{{Key: "intent_id", Value: []byte(id)}}}
}

// orderIntent asks for qty of the drop.
func orderIntent(i, qty int) kafka.Message {
	return intent(fmt.Sprintf("intent-%03d", i), fmt.Sprintf("v%03d", i),
		fmt.Sprintf(`{"product":%q,"quantity":%d}`, shop.DropID, qty))
}

func produce(t *testing.T, brokers []string, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: intentsTopic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
}

// resultReader reads the results topic from the start, as waitroom would.
func resultReader(t *testing.T, brokers []string) *kafka.Reader {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, GroupID: "test-" + t.Name(), Topic: resultsTopic,
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond})
	t.Cleanup(func() { r.Close() })
	return r
}

// readResults waits for the next n results, failing the test after 20 s.
func readResults(t *testing.T, r *kafka.Reader, n int) []shop.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := make([]shop.Result, 0, n)
	for len(out) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("after %d of %d results: %v", len(out), n, err)
		}
		var res shop.Result
		if err := json.Unmarshal(m.Value, &res); err != nil || string(m.Key) != res.IntentID {
			t.Fatalf("result %s = %s: %v", m.Key, m.Value, err)
		}
		out = append(out, res)
	}
	return out
}

// runConsumer runs c until the returned stop is called, which waits for Run
// to return and closes c.
func runConsumer(t *testing.T, c *shop.Consumer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func openDropStore(t *testing.T, stock int) *shop.Store {
	t.Helper()
	st, err := shop.OpenStore(context.Background(), t.TempDir()+"/shop.db",
		shop.Product{ID: shop.DropID, Name: shop.DropName, Price: shop.DropPrice, Stock: stock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
