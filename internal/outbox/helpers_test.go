package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
)

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// quiet is the logger of the loops under test: their warnings are expected
// here (the broker is stopped on purpose), and a goroutine may log after
// the test is over, where t.Log would panic.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), outbox.FileName) }

func openStore(t testing.TB, path string) *outbox.SQLiteStore {
	t.Helper()
	s, err := outbox.OpenSQLite(path, outbox.SQLiteOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func startBroker(t testing.TB) *kafkatest.Broker {
	return kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
}

func newPublisher(t testing.TB, br *kafkatest.Broker) *outbox.KafkaPublisher {
	t.Helper()
	p, err := outbox.NewKafkaPublisher(outbox.KafkaConfig{Brokers: br.Addrs(), WriteTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func payload(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"sku":"sneaker-%d","qty":1}`, i))
}

type pass struct {
	n   int
	err error
}

// passes returns an OnPass hook and the channel it reports on.
func passes() (func(int, error), chan pass) {
	ch := make(chan pass, 1024)
	return func(n int, err error) { ch <- pass{n, err} }, ch
}

func awaitPass(t testing.TB, ch <-chan pass) pass {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no relay pass within 30 s")
		return pass{}
	}
}

// runInBackground runs fn until the test ends, and waits for it then.
func runInBackground(t testing.TB, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("loop: %v", err)
		}
	})
}

func decodeIntent(t testing.TB, m kafka.Message) outbox.IntentMessage {
	t.Helper()
	var im outbox.IntentMessage
	if err := json.Unmarshal(m.Value, &im); err != nil {
		t.Fatalf("intent message %q: %v", m.Value, err)
	}
	return im
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func resultMsg(t testing.TB, r outbox.ResultMessage) kafka.Message {
	t.Helper()
	v, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Key: []byte(r.IntentID), Value: v}
}
