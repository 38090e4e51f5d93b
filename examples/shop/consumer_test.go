package shop_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/waitroom/waitroom/examples/shop"
)

func newConsumer(t *testing.T, st *shop.Store, brokers []string, cfg shop.ConsumerConfig) *shop.Consumer {
	t.Helper()
	cfg.Brokers, cfg.IntentsTopic, cfg.ResultsTopic = brokers, intentsTopic, resultsTopic
	cfg.Logger = testLogger(t)
	if cfg.GroupID == "" {
		cfg.GroupID = "shop-" + t.Name()
	}
	c, err := shop.NewConsumer(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// byID checks that every intent got one answer, however often it was sent.
func byID(t *testing.T, results []shop.Result) map[string]shop.Result {
	t.Helper()
	m := map[string]shop.Result{}
	for _, r := range results {
		if prev, ok := m[r.IntentID]; ok && prev != r {
			t.Errorf("%s answered %+v and %+v", r.IntentID, prev, r)
		}
		m[r.IntentID] = r
	}
	return m
}

func count(results map[string]shop.Result, status, reason string) int {
	n := 0
	for _, r := range results {
		if r.Status == status && r.Reason == reason {
			n++
		}
	}
	return n
}

// TestConsumerAnswersEachIntentOnce: 40 orders for 30 in stock, 8 of them
// delivered twice, and 2 that are no order. Exactly 30 are placed, each
// intent gets one answer however often it comes, and once committed nothing
// comes again to the next consumer of the group.
func TestConsumerAnswersEachIntentOnce(t *testing.T) {
	t.Parallel()
	brokers := startBroker(t)
	st := openDropStore(t, 30)
	var msgs []kafka.Message
	for i := range 40 {
		msgs = append(msgs, orderIntent(i, 1))
	}
	msgs = append(msgs, msgs[:8]...) // at-least-once: redelivered after the first
	msgs = append(msgs,
		intent("bad-qty", "vbad", `{"product":"sneaker-drop","quantity":9}`),
		kafka.Message{Key: []byte("demo/vjunk"), Value: []byte("not json"),
			Headers: []kafka.Header{{Key: "intent_id", Value: []byte("junk")}}})
	produce(t, brokers, msgs...)

	results := resultReader(t, brokers)
	c := newConsumer(t, st, brokers, shop.ConsumerConfig{BatchSize: 7, Interval: time.Millisecond})
	stop := runConsumer(t, c)
	got := byID(t, readResults(t, results, len(msgs)))
	stop()

	if len(got) != 42 || count(got, shop.ResultProcessed, "") != 30 ||
		count(got, shop.ResultRejected, shop.ReasonSoldOut) != 10 ||
		count(got, shop.ResultRejected, shop.ReasonInvalidPayload) != 2 {
		t.Fatalf("answers: %d intents, %d processed, %d sold out, %d invalid", len(got),
			count(got, shop.ResultProcessed, ""), count(got, shop.ResultRejected, shop.ReasonSoldOut),
			count(got, shop.ResultRejected, shop.ReasonInvalidPayload))
	}
	if s := c.Stats(); s.Taken != 50 || s.Processed != 30 || s.Rejected != 12 || s.Duplicates != 8 {
		t.Fatalf("stats: %+v", s)
	}
	if sold, _ := st.Sold(context.Background(), shop.DropID); sold != 30 || stockOf(t, st, shop.DropID) != 0 {
		t.Fatalf("sold %d, left %d", sold, stockOf(t, st, shop.DropID))
	}

	// The group committed: a new consumer's first intent is a new one.
	produce(t, brokers, orderIntent(99, 1))
	c2 := newConsumer(t, st, brokers, shop.ConsumerConfig{GroupID: "shop-" + t.Name()})
	stop2 := runConsumer(t, c2)
	if r := readResults(t, results, 1)[0]; r.IntentID != "intent-099" || r.Reason != shop.ReasonSoldOut {
		t.Fatalf("after restart: %+v", r)
	}
	stop2()
	if s := c2.Stats(); s.Taken != 1 {
		t.Fatalf("restart took %d, want only the new intent", s.Taken)
	}
}

// TestConsumerReplaysAfterCrashBeforeCommit: the broker refuses every offset
// commit, so the consumer stops with its answers out but nothing committed.
// The next one gets every intent again and answers each as before, placing
// nothing twice.
func TestConsumerReplaysAfterCrashBeforeCommit(t *testing.T) {
	t.Parallel()
	cluster, brokers := startControlledBroker(t)
	group := "shop-" + t.Name()
	var refuse atomic.Bool
	refuse.Store(true)
	cluster.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.OffsetCommitRequest)
		if !refuse.Load() || r.Group != group {
			return nil, nil, false
		}
		cluster.KeepControl()
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			t := kmsg.NewOffsetCommitResponseTopic()
			t.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				p := kmsg.NewOffsetCommitResponseTopicPartition()
				p.Partition, p.ErrorCode = rp.Partition, kerr.UnknownServerError.Code
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil, true
	})

	st := openDropStore(t, 5)
	var msgs []kafka.Message
	for i := range 8 {
		msgs = append(msgs, orderIntent(i, 1))
	}
	produce(t, brokers, msgs...)
	results := resultReader(t, brokers)
	cfg := shop.ConsumerConfig{BatchSize: 20, Interval: time.Millisecond}

	c := newConsumer(t, st, brokers, cfg)
	stop := runConsumer(t, c)
	first := byID(t, readResults(t, results, len(msgs)))
	stop() // the crash: answered, not committed
	if s := c.Stats(); s.Processed != 5 || s.Rejected != 3 {
		t.Fatalf("first run: %+v", s)
	}

	refuse.Store(false)
	c2 := newConsumer(t, st, brokers, cfg)
	stop2 := runConsumer(t, c2)
	again := byID(t, readResults(t, results, len(msgs)))
	stop2()
	for id, r := range first {
		if again[id] != r {
			t.Errorf("%s: first %+v, replayed %+v", id, r, again[id])
		}
	}
	if s := c2.Stats(); s.Duplicates != 8 || s.Processed != 0 || s.Rejected != 0 {
		t.Fatalf("replay: %+v", s)
	}
	if sold, _ := st.Sold(context.Background(), shop.DropID); sold != 5 {
		t.Fatalf("sold %d, want 5", sold)
	}
}

// TestConsumerKeepsThePace: with the clock held, the consumer takes one
// batch of at most BatchSize and then waits for Interval to pass.
func TestConsumerKeepsThePace(t *testing.T) {
	t.Parallel()
	brokers := startBroker(t)
	st := openDropStore(t, 100)
	const n, batchSize, interval = 45, 10, 500 * time.Millisecond
	var msgs []kafka.Message
	for i := range n {
		msgs = append(msgs, orderIntent(i, 1))
	}
	produce(t, brokers, msgs...)

	clock := clockwork.NewFakeClock()
	c := newConsumer(t, st, brokers, shop.ConsumerConfig{BatchSize: batchSize, Interval: interval, Clock: clock})
	stop := runConsumer(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var prev shop.Stats
	for rounds := 0; prev.Taken < n; rounds++ {
		// Blocked on the clock: the batch is answered and the consumer waits.
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatalf("round %d: consumer never waited on the clock: %v (stats %+v)", rounds, err, c.Stats())
		}
		s := c.Stats()
		if s.Batches != prev.Batches+1 || s.Taken-prev.Taken > batchSize || s.Taken == prev.Taken {
			t.Fatalf("round %d: %+v after %+v: want one batch of 1..%d", rounds, s, prev, batchSize)
		}
		prev = s
		clock.Advance(interval - time.Nanosecond)
		if s := c.Stats(); s.Batches != prev.Batches {
			t.Fatalf("round %d: a batch went before the interval was over", rounds)
		}
		clock.Advance(time.Nanosecond)
	}
	stop()
	if prev.Taken != n || prev.Processed != n || prev.Batches < n/batchSize {
		t.Fatalf("stats %+v", prev)
	}
}
