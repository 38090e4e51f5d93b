// Package outbox keeps checkout intents accepted while Redis is down: each
// is written durably to a SQLite outbox, relayed to Kafka for the shop's
// checkout to consume at its own pace, and marked processed or rejected
// from the results the checkout sends back.
//
// Nothing accepted is lost: Accept returns after COMMIT, and rows stay
// pending until the broker acknowledged them. Delivery to Kafka is at
// least once; consumers drop intent ids they have already handled.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"
)

// Config wires an Outbox. Dir and Brokers are required.
type Config struct {
	Dir          string   // data directory; the outbox is Dir/outbox.db
	Brokers      []string // Kafka bootstrap addresses
	Auth         KafkaAuth
	IntentsTopic string // DefaultIntentsTopic when empty
	ResultsTopic string // DefaultResultsTopic when empty
	ResultsGroup string // DefaultResultsGroup when empty
	// ViewGroup, when set, is this server's own consumer group of both
	// topics: it keeps a view of every server's intents, so Get answers
	// for intents another server took.
	ViewGroup string
	// ViewMaxIntents and ViewMaxAge bound the view (in memory; see
	// DefaultViewMaxIntents and DefaultViewMaxAge for 0).
	ViewMaxIntents int
	ViewMaxAge     time.Duration
	// KeySecret keys each intent's idempotency key (IdempotencyKey). Every
	// server must use the same: cmd/waitroom derives it from the signing key.
	KeySecret []byte
	// RetryInterval is the relay's sweep period and longest retry wait; 0 means 10 s.
	RetryInterval time.Duration
	Clock         clockwork.Clock // real time when nil
	Logger        *slog.Logger    // slog.Default() when nil
	// OnPass hears each relay pass and OnApply each batch of results
	// applied; both optional, for metrics.
	OnPass  func(published int, err error)
	OnApply func(messages, changed int)
}

// Outbox is the store, the relay and the results consumer together: what
// the HTTP side needs.
type Outbox struct {
	store     *SQLiteStore
	pub       *KafkaPublisher
	relay     *Relay
	results   *ResultConsumer
	view      *View // nil without ViewGroup
	keySecret []byte
}

// Open opens the outbox file and prepares the Kafka clients. Accept works
// from here on; nothing connects to Kafka before Run.
func Open(cfg Config) (*Outbox, error) {
	if cfg.Dir == "" {
		return nil, errors.New("outbox: open: no data directory")
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	pub, err := NewKafkaPublisher(KafkaConfig{Brokers: cfg.Brokers, Topic: cfg.IntentsTopic, Auth: cfg.Auth})
	if err != nil {
		return nil, err
	}
	store, err := OpenSQLite(filepath.Join(cfg.Dir, FileName), SQLiteOptions{Clock: cfg.Clock, Logger: cfg.Logger, KeySecret: cfg.KeySecret})
	if err != nil {
		_ = pub.Close()
		return nil, err
	}
	results, err := NewResultConsumer(store, ResultsConfig{
		Brokers: cfg.Brokers,
		Topic:   cfg.ResultsTopic,
		GroupID: cfg.ResultsGroup,
		Auth:    cfg.Auth,
		Clock:   cfg.Clock,
		Logger:  cfg.Logger,
		OnApply: cfg.OnApply,
	})
	if err != nil {
		return nil, errors.Join(err, pub.Close(), store.Close())
	}
	relay := NewRelay(store, pub, RelayConfig{
		Interval: cfg.RetryInterval,
		Clock:    cfg.Clock,
		Logger:   cfg.Logger,
		OnPass:   cfg.OnPass,
	})
	// Older versions kept the view in a file beside the outbox, where it
	// could fill the outbox's disk: the view is in memory now.
	for _, f := range []string{"intents-view.db", "intents-view.db-wal", "intents-view.db-shm"} {
		_ = os.Remove(filepath.Join(cfg.Dir, f))
	}
	o := &Outbox{store: store, pub: pub, relay: relay, results: results, keySecret: cfg.KeySecret}
	if cfg.ViewGroup != "" {
		if o.view, err = OpenView(ViewConfig{Brokers: cfg.Brokers, IntentsTopic: cfg.IntentsTopic,
			ResultsTopic: cfg.ResultsTopic, GroupID: cfg.ViewGroup, Auth: cfg.Auth, Logger: cfg.Logger,
			MaxIntents: cfg.ViewMaxIntents, MaxAge: cfg.ViewMaxAge, Now: cfg.Clock.Now}); err != nil {
			return nil, errors.Join(err, pub.Close(), store.Close())
		}
	}
	return o, nil
}

// Accept durably records a visitor's intent and returns it (created true),
// or the visitor's intent in room that checkout did not reject, unchanged
// (created false): this server's own, else one another server took that
// the view has read back from Kafka. Either way answer 202 with in.ID. A
// new intent is handed to the relay at once.
//
// Two servers that take one visitor's intents before either reads the
// other's back (within a relay pass and a fetch, or while Kafka is down)
// both create one; both carry the same idempotency key, and checkout places
// one order per key.
func (o *Outbox) Accept(ctx context.Context, room, visitor string, payload json.RawMessage) (in Intent, created bool, err error) {
	if o.view != nil {
		if in, ok := o.view.Find(room, visitor); ok {
			if own, err := o.store.Get(ctx, in.ID); err == nil {
				return own, false, nil // this server's: its status is the newest
			}
			in.Key = IdempotencyKey(o.keySecret, room, visitor)
			return in, false, nil
		}
	}
	in, created, err = o.store.Accept(ctx, room, visitor, payload)
	if created {
		o.relay.Kick()
	}
	return in, created, err
}

// Get returns an intent by id, or ErrNotFound: this server's own, else
// (with a view) one another server took, once it is in Kafka.
func (o *Outbox) Get(ctx context.Context, id string) (Intent, error) {
	in, err := o.store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) && o.view != nil {
		return o.view.Get(ctx, id)
	}
	return in, err
}

// Find returns the visitor's intent in room that checkout did not reject
// (ok false when none): this server's own, else one the view read back.
func (o *Outbox) Find(ctx context.Context, room, visitor string) (Intent, bool, error) {
	in, err := o.store.Find(ctx, room, visitor)
	if err == nil {
		return in, true, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Intent{}, false, err
	}
	if o.view != nil {
		if in, ok := o.view.Find(room, visitor); ok {
			return in, true, nil
		}
	}
	return Intent{}, false, nil
}

// HeldIntent is Find for the line (queue.HeldIntents): the id of the
// visitor's intent in room that checkout did not reject. A read that fails
// says none: the line is not held up by the outbox's disk.
func (o *Outbox) HeldIntent(room, visitor string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	in, ok, err := o.Find(ctx, room, visitor)
	if err != nil || !ok {
		return "", false
	}
	return in.ID, true
}

// Writable returns nil while the outbox's disk takes writes, else an
// ErrWriteFailed error (SQLiteStore.Writable).
func (o *Outbox) Writable(ctx context.Context) error { return o.store.Writable(ctx) }

// WriteFailures counts the writes the outbox's disk refused.
func (o *Outbox) WriteFailures() int64 { return o.store.WriteFailures() }

// ViewLen is the number of intents the view holds (0 without one).
func (o *Outbox) ViewLen() int {
	if o.view == nil {
		return 0
	}
	return o.view.Len()
}

// Counts returns the intents by status.
func (o *Outbox) Counts(ctx context.Context) (Counts, error) { return o.store.Counts(ctx) }

// Store is the outbox's store.
func (o *Outbox) Store() Store { return o.store }

// Run relays intents and applies results until ctx ends; it returns nil
// then, or the first loop's failure.
func (o *Outbox) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return o.relay.Run(ctx) })
	g.Go(func() error { return o.results.Run(ctx) })
	if o.view != nil {
		g.Go(func() error { return o.view.Run(ctx) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("outbox: run: %w", err)
	}
	return nil
}

// Close closes the Kafka writer and then the store, which first commits
// the writes it already took. Call it after Run returned.
func (o *Outbox) Close() error {
	err := errors.Join(o.pub.Close(), o.store.Close())
	if o.view != nil {
		err = errors.Join(err, o.view.Close())
	}
	return err
}
