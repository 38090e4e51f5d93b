package shop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/internal/outbox"
)

// Defaults for ConsumerConfig.
const (
	DefaultIntentsTopic = "waitroom.intents"
	DefaultResultsTopic = "waitroom.results"
	DefaultGroupID      = "demo-shop"
	DefaultBatchSize    = 20
	DefaultInterval     = 500 * time.Millisecond
	DefaultLinger       = 20 * time.Millisecond

	// DrainTimeout bounds finishing the batch in hand after Run's ctx ends.
	DrainTimeout = 10 * time.Second
)

// ConsumerConfig says where intents come from and the pace checkout takes
// them at: at most BatchSize every Interval.
type ConsumerConfig struct {
	Brokers      []string
	IntentsTopic string
	ResultsTopic string
	GroupID      string
	BatchSize    int
	Interval     time.Duration
	// Linger is how long a batch waits to fill once its first intent is in.
	Linger time.Duration
	Clock  clockwork.Clock // paces the batches
	Logger *slog.Logger
	Auth   outbox.KafkaAuth // TLS and SASL, as waitroom's own clients
}

func (c *ConsumerConfig) defaults() error {
	if len(c.Brokers) == 0 {
		return errors.New("shop: consumer: no Kafka brokers")
	}
	if c.BatchSize < 0 || c.Interval < 0 || c.Linger < 0 {
		return fmt.Errorf("shop: consumer: negative batch size %d, interval %s or linger %s", c.BatchSize, c.Interval, c.Linger)
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.IntentsTopic, DefaultIntentsTopic)
	def(&c.ResultsTopic, DefaultResultsTopic)
	def(&c.GroupID, DefaultGroupID)
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Linger == 0 {
		c.Linger = DefaultLinger
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Stats counts what the consumer did since it was made.
type Stats struct {
	Taken      int64 // messages taken off the topic, repeats included
	Batches    int64
	Processed  int64 // intents that placed an order
	Rejected   int64 // intents refused: sold out, or a payload that is no order
	Duplicates int64 // intents answered before: the same answer went out again
}

// Consumer is the shop's checkout for intents: it places their orders at its
// own pace and answers each on the results topic. Offsets are committed only
// after the answers are written, so a crash means a replay, which the store's
// idempotency answers the same way.
type Consumer struct {
	store   *Store
	cfg     ConsumerConfig
	log     *slog.Logger
	reader  *kafka.Reader
	writer  *kafka.Writer
	running atomic.Bool

	taken, batches, processed, rejected, duplicates atomic.Int64
}

// NewConsumer makes a consumer of cfg.IntentsTopic in group cfg.GroupID. It
// connects when Run starts.
func NewConsumer(store *Store, cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	kafkaLog := kafka.LoggerFunc(func(msg string, args ...any) {
		log.Warn("shop: kafka: " + fmt.Sprintf(msg, args...))
	})
	return &Consumer{
		store: store, cfg: cfg, log: log,
		reader: kafka.NewReader(kafka.ReaderConfig{
			Brokers: cfg.Brokers, GroupID: cfg.GroupID, Topic: cfg.IntentsTopic, Dialer: cfg.Auth.Dialer(),
			// A new group starts at the oldest intent: those accepted before the
			// shop first ran are orders too.
			StartOffset: kafka.FirstOffset,
			// Commit when told, not on a timer: after the results are out.
			CommitInterval: 0,
			// Prefetch one batch; more would only be redelivered on a rebalance.
			QueueCapacity: cfg.BatchSize,
			// Shorter long-polls than the 10 s default, so Close does not wait
			// one out; kafka-go keeps a quarter of it as network margin.
			MaxWait:     time.Second,
			ErrorLogger: kafkaLog,
		}),
		writer: &kafka.Writer{
			Addr: kafka.TCP(cfg.Brokers...), Topic: cfg.ResultsTopic, Transport: cfg.Auth.Transport(),
			Balancer:     &kafka.Hash{},
			RequiredAcks: kafka.RequireAll,
			BatchSize:    cfg.BatchSize,
			// Writes are synchronous, one per batch: do not wait for more.
			BatchTimeout: 5 * time.Millisecond,
			ErrorLogger:  kafkaLog,
		},
	}, nil
}

// Stats returns the counters now.
func (c *Consumer) Stats() Stats {
	return Stats{
		Taken: c.taken.Load(), Batches: c.batches.Load(), Processed: c.processed.Load(),
		Rejected: c.rejected.Load(), Duplicates: c.duplicates.Load(),
	}
}

// Close leaves the group and closes the connections; Run then returns.
func (c *Consumer) Close() error {
	if err := errors.Join(c.reader.Close(), c.writer.Close()); err != nil {
		return fmt.Errorf("shop: close consumer: %w", err)
	}
	return nil
}

// Run takes intents until ctx ends (then it returns nil) or the consumer is
// closed. Kafka and store failures are logged and retried, never skipped.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("shop: consume: already running")
	}
	defer c.running.Store(false)
	c.log.Info("shop: consuming intents", "topic", c.cfg.IntentsTopic, "group", c.cfg.GroupID,
		"results", c.cfg.ResultsTopic, "batch_size", c.cfg.BatchSize, "interval", c.cfg.Interval)

	var next time.Time // when the next batch may be taken; zero: now
	backoff := newBackoff()
	for {
		if !c.waitUntil(ctx, next) {
			return nil
		}
		batch, taken, err := c.take(ctx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, io.EOF):
			return errors.New("shop: consume: consumer closed")
		default:
			c.log.Warn("shop: consume: fetch", "err", err)
			if !c.waitUntil(ctx, c.cfg.Clock.Now().Add(backoff.next())) {
				return nil
			}
			continue
		}
		backoff.reset()
		next = taken.Add(c.cfg.Interval)
		if err := c.handle(ctx, batch); err != nil {
			c.log.Warn("shop: consume: stopped with a batch unfinished; it comes again", "batch", len(batch), "err", err)
			return nil
		}
	}
}

// take blocks for the first intent, then gathers what comes within Linger,
// up to BatchSize. taken is when the first arrived: pacing counts from there.
func (c *Consumer) take(ctx context.Context) (batch []kafka.Message, taken time.Time, err error) {
	m, err := c.reader.FetchMessage(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	taken = c.cfg.Clock.Now()
	batch = append(make([]kafka.Message, 0, c.cfg.BatchSize), m)
	lctx, cancel := context.WithTimeout(ctx, c.cfg.Linger)
	defer cancel()
	for len(batch) < c.cfg.BatchSize {
		// A fetch cut short by the linger leaves its message queued for the next batch.
		m, err := c.reader.FetchMessage(lctx)
		if err != nil {
			break
		}
		batch = append(batch, m)
	}
	c.taken.Add(int64(len(batch)))
	c.batches.Add(1)
	return batch, taken, nil
}

// handle answers a batch: orders placed, results written with every replica's
// ack, then offsets committed. A batch in hand is finished even if ctx ends
// meanwhile, for up to DrainTimeout, so a clean stop leaves nothing to replay.
func (c *Consumer) handle(ctx context.Context, batch []kafka.Message) error {
	ctx, done := drainContext(ctx, DrainTimeout)
	defer done()
	results := make([]kafka.Message, 0, len(batch))
	for _, m := range batch {
		var res Result
		err := c.retry(ctx, "place order", func() (err error) {
			res, err = c.decide(ctx, m)
			return err
		})
		if err != nil {
			return err
		}
		if res.IntentID == "" {
			continue // nothing to answer to; decide logged it
		}
		value, _ := json.Marshal(res)
		results = append(results, kafka.Message{Key: []byte(res.IntentID), Value: value})
	}
	if len(results) > 0 {
		if err := c.retry(ctx, "publish results", func() error { return c.writer.WriteMessages(ctx, results...) }); err != nil {
			return err
		}
	}
	// A failed commit is not worth stalling the line for: a later commit on
	// the same partition covers these, or they come again after a restart
	// and get the same answers.
	if err := c.reader.CommitMessages(ctx, batch...); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.log.Warn("shop: consume: commit offsets", "err", err, "batch", len(batch))
	}
	return nil
}
