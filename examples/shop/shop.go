// Package shop is the demo of embedded mode (go run ./cmd/waitroom), kept
// out of the product: a shop's own checkout working with waitroom. It
// verifies the entry token offline through the gate middleware, sells a
// limited drop from its own SQLite store, and on "Place order" tells waitroom
// the slot is free. When waitroom's line is down, the same stock is sold to
// the intents waitroom publishes to Kafka, at the pace the shop sets. Its
// embed demo is a shop page on another origin with the line embedded.
package shop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/gate/middleware"
	"github.com/waitroom/waitroom/internal/outbox"
)

// The drop the demo sells.
const (
	DropID       = "sneaker-drop"
	DropName     = "Limited sneaker drop"
	DropPrice    = "₩129,000"
	DefaultStock = 500
)

// Config says where the waiting room is, which room protects this shop, where
// the shop keeps its orders, and where the intents come from.
type Config struct {
	WaitroomURL string // e.g. http://127.0.0.1:8080
	Issuer      string // the iss of entry tokens: waitroom's --public-url; default WaitroomURL
	Room        string
	Client      *http.Client
	Logger      *slog.Logger
	Now         func() time.Time // checks token times

	// DataDir holds shop.db; "" keeps the store in memory until Close.
	DataDir string
	// Stock is what a new store starts with (0: DefaultStock). An existing
	// shop.db keeps its own count, so a restart does not restock.
	Stock int

	// The degraded path; with no brokers there is no consumer. Zero values
	// take the ConsumerConfig defaults.
	KafkaBrokers []string
	IntentsTopic string
	ResultsTopic string
	GroupID      string
	BatchSize    int // intents taken at most per Interval
	Interval     time.Duration
	Clock        clockwork.Clock // paces the consumer
	KafkaAuth    outbox.KafkaAuth
}

// Shop serves /shop and /shop/complete and consumes intents.
type Shop struct {
	cfg      Config
	store    *Store
	consumer *Consumer

	verifier *middleware.Verifier
}

// Open opens the store and makes the consumer, which starts with RunConsumer.
// The JWKS cache starts on first use (the waiting room may not be listening
// yet) and refreshes in the background until ctx ends.
func Open(ctx context.Context, cfg Config) (*Shop, error) {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stock == 0 {
		cfg.Stock = DefaultStock
	}
	verifier, err := middleware.NewVerifier(middleware.Config{WaitroomURL: cfg.WaitroomURL, Issuer: cfg.Issuer,
		Room: cfg.Room, Client: cfg.Client, Logger: cfg.Logger, Now: cfg.Now, Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("shop: open: %w", err)
	}
	path := ""
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("shop: open: %w", err)
		}
		path = filepath.Join(cfg.DataDir, "shop.db")
	}
	store, err := OpenStore(ctx, path, Product{ID: DropID, Name: DropName, Price: DropPrice, Stock: cfg.Stock})
	if err != nil {
		return nil, err
	}
	s := &Shop{cfg: cfg, store: store, verifier: verifier}
	if len(cfg.KafkaBrokers) > 0 {
		s.consumer, err = NewConsumer(store, ConsumerConfig{
			Brokers: cfg.KafkaBrokers, IntentsTopic: cfg.IntentsTopic, ResultsTopic: cfg.ResultsTopic,
			GroupID: cfg.GroupID, BatchSize: cfg.BatchSize, Interval: cfg.Interval,
			Clock: cfg.Clock, Logger: cfg.Logger, Auth: cfg.KafkaAuth,
		})
		if err != nil {
			store.Close()
			return nil, err
		}
	}
	return s, nil
}

// Store is the shop's stock and orders.
func (s *Shop) Store() *Store { return s.store }

// Consumer is the intents consumer, nil without Kafka brokers.
func (s *Shop) Consumer() *Consumer { return s.consumer }

// RunConsumer takes intents until ctx ends; see Consumer.Run.
func (s *Shop) RunConsumer(ctx context.Context) error {
	if s.consumer == nil {
		return errors.New("shop: consume: no Kafka brokers configured")
	}
	return s.consumer.Run(ctx)
}

// Close stops the consumer and closes the store. Handler must not be serving.
func (s *Shop) Close() error {
	var err error
	if s.consumer != nil {
		err = s.consumer.Close()
	}
	return errors.Join(err, s.store.Close())
}
