//go:build !noembedded

package main

import (
	"github.com/alicebob/miniredis/v2"

	"github.com/waitroom/waitroom/internal/outbox"
)

// embeddedServices: this build carries the in-process Redis and Kafka of
// embedded mode (and the demo that runs only there); -tags noembedded
// leaves them out of a production binary.
const embeddedServices = true

// startEmbeddedRedis runs miniredis on loopback, so the same Redis adapter
// and Lua scripts run without anything installed.
func startEmbeddedRedis() (closerAddr, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return mr, nil
}

// startEmbeddedBroker runs the in-process Kafka-protocol broker (kfake),
// keeping its log in dir with every write synced.
func startEmbeddedBroker(dir string, topics []string) (brokerRunning, error) {
	return outbox.StartEmbedded(outbox.EmbeddedConfig{DataDir: dir, SyncWrites: true, Topics: topics})
}
