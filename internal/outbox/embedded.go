//go:build !noembedded

package outbox

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// EmbeddedConfig configures an in-process Kafka-protocol broker.
type EmbeddedConfig struct {
	// Port on 127.0.0.1; 0 picks a free one.
	Port int
	// DataDir keeps the log and the consumer groups' offsets on disk, so a
	// restart on the same DataDir loses nothing; empty keeps them in memory.
	DataDir string
	// SyncWrites fsyncs every produced batch. Without it an acknowledged
	// message can be lost in a machine crash (not in a process crash).
	SyncWrites bool
	// Partitions of each topic created; 0 means 4.
	Partitions int32
	// Topics to create when the broker starts with no saved state.
	Topics []string
	// SASL, when set, makes the broker require SASL from every client, with
	// these users (tests of the clients' SASL settings).
	SASL []SASLUser
	// TLS, when set, makes the broker listen with TLS (tests of the
	// clients' TLS settings).
	TLS *tls.Config
}

// SASLUser is one user of an embedded broker with SASL: Mechanism is
// PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
type SASLUser struct {
	Mechanism, User, Password string
}

// EmbeddedBroker is a single Kafka-protocol broker (kfake) in this process,
// for a demo without Kafka and for tests. It is not Kafka: no replication.
type EmbeddedBroker struct {
	c *kfake.Cluster
}

// StartEmbedded starts a broker on 127.0.0.1.
func StartEmbedded(cfg EmbeddedConfig) (*EmbeddedBroker, error) {
	parts := cfg.Partitions
	if parts <= 0 {
		parts = 4
	}
	opts := []kfake.Opt{
		kfake.Ports(cfg.Port),
		kfake.DefaultNumPartitions(int(parts)),
		// Group joins in tests and demos should not wait out Kafka's 6 s floor.
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(parts, cfg.Topics...))
	}
	if len(cfg.SASL) > 0 {
		opts = append(opts, kfake.EnableSASL())
		for _, u := range cfg.SASL {
			opts = append(opts, kfake.Superuser(u.Mechanism, u.User, u.Password))
		}
	}
	if cfg.TLS != nil {
		opts = append(opts, kfake.TLS(cfg.TLS))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
		if cfg.SyncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("outbox: start embedded broker: %w", err)
	}
	return &EmbeddedBroker{c: c}, nil
}

// Addrs are the broker's host:port addresses.
func (b *EmbeddedBroker) Addrs() []string { return b.c.ListenAddrs() }

// Close stops the broker and drops its clients' connections; with a
// DataDir it saves its state first. Closing twice is harmless.
func (b *EmbeddedBroker) Close() { b.c.Close() }
