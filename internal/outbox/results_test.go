package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
)

type applied struct{ messages, changed int }

// startResults runs a result consumer until stop is called or the test ends.
func startResults(t *testing.T, s outbox.Store, br *kafkatest.Broker) (ch chan applied, stop func()) {
	t.Helper()
	ch = make(chan applied, 1024)
	c, err := outbox.NewResultConsumer(s, outbox.ResultsConfig{
		Brokers: br.Addrs(), Logger: quiet,
		OnApply: func(m, n int) { ch <- applied{m, n} },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("result consumer: %v", err)
		}
	}
	t.Cleanup(stop)
	return ch, stop
}

// awaitApplied waits until the consumer has read n messages and returns
// how many intents they changed.
func awaitApplied(t *testing.T, ch <-chan applied, n int) int {
	t.Helper()
	var got applied
	timeout := time.After(30 * time.Second)
	for got.messages < n {
		select {
		case a := <-ch:
			got.messages += a.messages
			got.changed += a.changed
		case <-timeout:
			t.Fatalf("consumer read %d of %d results in 30 s", got.messages, n)
		}
	}
	if got.messages != n {
		t.Fatalf("consumer read %d results, want %d", got.messages, n)
	}
	return got.changed
}

func TestResultsMarkProcessedAndRejected(t *testing.T) {
	ctx := testCtx(t)
	br := startBroker(t)
	s := openStore(t, dbPath(t))
	a, _, _ := s.Accept(ctx, "drop", "a", payload(1))
	b, _, _ := s.Accept(ctx, "drop", "b", payload(2))
	c, _, _ := s.Accept(ctx, "drop", "c", payload(3))
	relay := outbox.NewRelay(s, newPublisher(t, br), outbox.RelayConfig{Logger: quiet})
	if _, err := relay.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	ch, stop := startResults(t, s, br)
	br.Write(t, outbox.DefaultResultsTopic,
		resultMsg(t, outbox.ResultMessage{IntentID: a.ID, Status: outbox.ResultProcessed}),
		resultMsg(t, outbox.ResultMessage{IntentID: b.ID, Status: outbox.ResultRejected, Reason: "sold out"}),
		resultMsg(t, outbox.ResultMessage{IntentID: a.ID, Status: outbox.ResultProcessed}),      // duplicate
		resultMsg(t, outbox.ResultMessage{IntentID: b.ID, Status: outbox.ResultProcessed}),      // after final
		resultMsg(t, outbox.ResultMessage{IntentID: "unknown", Status: outbox.ResultProcessed}), // unknown intent
		kafka.Message{Key: []byte(c.ID), Value: []byte(`{"intent_id":`)},                        // malformed
	)
	if changed := awaitApplied(t, ch, 6); changed != 2 {
		t.Fatalf("6 results changed %d intents, want 2", changed)
	}
	check := func(id string, status outbox.Status, reason string) {
		t.Helper()
		in, err := s.Get(ctx, id)
		if err != nil || in.Status != status || in.Reason != reason {
			t.Errorf("%s: %s %q, %v; want %s %q", id, in.Status, in.Reason, err, status, reason)
		}
	}
	check(a.ID, outbox.StatusProcessed, "")
	check(b.ID, outbox.StatusRejected, "sold out")
	check(c.ID, outbox.StatusPublished, "")
	if got, _ := s.Counts(ctx); got != (outbox.Counts{Published: 1, Processed: 1, Rejected: 1}) {
		t.Fatalf("counts = %+v", got)
	}

	// Offsets were committed after the writes: a consumer of the same group
	// starts after them and reads only what is new.
	stop()
	ch, _ = startResults(t, s, br)
	br.Write(t, outbox.DefaultResultsTopic, resultMsg(t, outbox.ResultMessage{IntentID: c.ID, Status: outbox.ResultRejected, Reason: "limit"}))
	if changed := awaitApplied(t, ch, 1); changed != 1 {
		t.Fatalf("new result changed %d intents, want 1", changed)
	}
	check(c.ID, outbox.StatusRejected, "limit")
}
