//go:build !noembedded

package kafkatest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

var groups atomic.Int64

// Write produces msgs to topic, acknowledged by the broker, or fails the test.
func (br *Broker) Write(tb testing.TB, topic string, msgs ...kafka.Message) {
	tb.Helper()
	w := &kafka.Writer{
		Addr:         kafka.TCP(br.Addrs()...),
		Topic:        topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		tb.Fatalf("kafkatest: write %s: %v", topic, err)
	}
}

// Read reads n messages from the start of every partition of topic, in a
// consumer group of its own, or fails the test after 30 s.
func (br *Broker) Read(tb testing.TB, topic string, n int) []kafka.Message {
	tb.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:          br.Addrs(),
		GroupID:          fmt.Sprintf("kafkatest-read-%d", groups.Add(1)),
		Topic:            topic,
		StartOffset:      kafka.FirstOffset,
		MaxWait:          100 * time.Millisecond,
		JoinGroupBackoff: 100 * time.Millisecond,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make([]kafka.Message, 0, n)
	for len(out) < n {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			tb.Fatalf("kafkatest: read %s: got %d of %d messages: %v", topic, len(out), n, err)
		}
		out = append(out, m)
	}
	return out
}
