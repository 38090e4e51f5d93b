//go:build !noembedded

// Package kafkatest gives tests a Kafka-protocol broker (kfake, in process)
// on a loopback port that can be stopped and started again on the same port
// with its data, to test a broker that goes down and comes back.
package kafkatest

import (
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/internal/outbox"
)

// Broker is one broker for one test.
type Broker struct {
	tb   testing.TB
	cfg  outbox.EmbeddedConfig
	addr string

	mu sync.Mutex
	b  *outbox.EmbeddedBroker // nil while stopped
}

// Start starts a broker with topics on a free 127.0.0.1 port, its data in
// a directory of the test's, stopped when the test ends.
func Start(tb testing.TB, topics ...string) *Broker {
	tb.Helper()
	cfg := outbox.EmbeddedConfig{DataDir: tb.TempDir(), Topics: topics}
	b, err := outbox.StartEmbedded(cfg)
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	br := &Broker{tb: tb, cfg: cfg, addr: b.Addrs()[0], b: b}
	tb.Cleanup(br.Stop)
	return br
}

// Addrs are the broker's addresses; they stay the same across Stop and Restart.
func (br *Broker) Addrs() []string { return []string{br.addr} }

// Stop closes the broker: its port refuses connections and its clients'
// connections drop. The data stays on disk for Restart.
func (br *Broker) Stop() {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.b != nil {
		br.b.Close()
		br.b = nil
	}
}

// Restart starts the broker again on the same port with the data it had,
// including consumer groups' committed offsets.
func (br *Broker) Restart() {
	br.tb.Helper()
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.b != nil {
		return
	}
	cfg := br.cfg
	cfg.Port = port(br.addr)
	b, err := outbox.StartEmbedded(cfg)
	if err != nil {
		br.tb.Fatalf("kafkatest: restart: %v", err)
	}
	br.b = b
}

func port(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		panic("kafkatest: " + err.Error())
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		panic("kafkatest: " + err.Error())
	}
	return n
}
