package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/segmentio/kafka-go"
)

// ResultsConfig says where the consumers' results come from.
type ResultsConfig struct {
	Brokers []string
	Topic   string // DefaultResultsTopic when empty
	GroupID string // DefaultResultsGroup when empty
	// SessionTimeout is how long the group waits for a silent member
	// before handing its partitions to another; 0 means 10 s. After a
	// broker restart results may pause for up to this long.
	SessionTimeout time.Duration
	Clock          clockwork.Clock
	Logger         *slog.Logger
	Auth           KafkaAuth
	// OnApply, when set, hears each applied batch once it is written and
	// its offsets committed: messages read and intents they changed
	// (metrics, tests).
	OnApply func(messages, changed int)
}

// ResultConsumer reads the results topic in a consumer group and marks
// intents processed or rejected. Offsets are committed only after the
// outbox's COMMIT, so a crash re-reads results, which Finish ignores.
type ResultConsumer struct {
	store Store
	cfg   ResultsConfig
	rc    kafka.ReaderConfig
}

// maxResultBatch bounds the results applied in one outbox transaction.
const maxResultBatch = 512

// fetchRetry is the pause after a failed fetch; kafka-go backs off too.
const fetchRetry = 100 * time.Millisecond

// NewResultConsumer returns a consumer; it joins the group only in Run.
func NewResultConsumer(store Store, cfg ResultsConfig) (*ResultConsumer, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("outbox: result consumer: no brokers")
	}
	if cfg.Topic == "" {
		cfg.Topic = DefaultResultsTopic
	}
	if cfg.GroupID == "" {
		cfg.GroupID = DefaultResultsGroup
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	log := cfg.Logger
	rc := kafka.ReaderConfig{
		Brokers: cfg.Brokers,
		Dialer:  cfg.Auth.Dialer(),
		GroupID: cfg.GroupID,
		Topic:   cfg.Topic,
		// A new group starts at the beginning: results written before it
		// first joined still count.
		StartOffset:       kafka.FirstOffset,
		MinBytes:          1,
		MaxBytes:          4 << 20,
		MaxWait:           500 * time.Millisecond,
		CommitInterval:    0, // commit synchronously, after the outbox write
		HeartbeatInterval: cfg.SessionTimeout / 10,
		SessionTimeout:    cfg.SessionTimeout,
		RebalanceTimeout:  cfg.SessionTimeout,
		// Rejoin quickly after a broker restart; kafka-go waits 5 s by default.
		JoinGroupBackoff: 500 * time.Millisecond,
		ReadBackoffMin:   50 * time.Millisecond,
		ReadBackoffMax:   time.Second,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			log.Debug("outbox: results: kafka", "msg", fmt.Sprintf(msg, args...))
		}),
	}
	// kafka.NewReader panics on a bad config: find out here instead.
	if err := rc.Validate(); err != nil {
		return nil, fmt.Errorf("outbox: result consumer: %w", err)
	}
	return &ResultConsumer{store: store, cfg: cfg, rc: rc}, nil
}

// Run joins the group and applies results until ctx ends or the store is
// closed, and returns nil then; on its way out it leaves the group, which
// can take up to SessionTimeout while a rebalance is under way.
func (c *ResultConsumer) Run(ctx context.Context) error {
	r := kafka.NewReader(c.rc)
	defer func() {
		if err := r.Close(); err != nil {
			c.cfg.Logger.Warn("outbox: results: close reader", "err", err)
		}
	}()
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	msgs := make(chan kafka.Message, maxResultBatch)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(msgs)
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// kafka-go passes on each partition reader's error (a broker
				// going away, say) and then goes on: only EOF, a closed
				// reader, ends the stream.
				if errors.Is(err, io.EOF) {
					return
				}
				c.cfg.Logger.Warn("outbox: results: fetch", "err", err)
				select {
				case <-ctx.Done():
					return
				case <-c.cfg.Clock.After(fetchRetry):
				}
				continue
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	})
	defer func() {
		cancel()
		wg.Wait()
	}()

	batch := make([]kafka.Message, 0, maxResultBatch)
	for {
		m, ok := <-msgs
		if !ok {
			if parent.Err() != nil {
				return nil
			}
			return errors.New("outbox: results: reader closed")
		}
		// Take what else is already here: one transaction for all of them.
		batch = append(batch[:0], m)
	gather:
		for len(batch) < maxResultBatch {
			select {
			case m, ok := <-msgs:
				if !ok {
					break gather
				}
				batch = append(batch, m)
			default:
				break gather
			}
		}
		if err := c.apply(ctx, r, batch); err != nil {
			if errors.Is(err, ErrClosed) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// apply writes a batch of results and then commits their offsets. The
// write is retried until it succeeds: the reader will not hand the same
// messages out again before a rebalance.
func (c *ResultConsumer) apply(ctx context.Context, r *kafka.Reader, batch []kafka.Message) error {
	log := c.cfg.Logger
	results := make([]ResultMessage, 0, len(batch))
	for _, m := range batch {
		var res ResultMessage
		if err := json.Unmarshal(m.Value, &res); err != nil || res.IntentID == "" {
			log.Warn("outbox: results: skip malformed message", "partition", m.Partition, "offset", m.Offset, "err", err)
			continue
		}
		results = append(results, res)
	}
	wait := 100 * time.Millisecond
	var changed int
	for {
		n, err := c.store.Finish(ctx, results)
		if err == nil {
			changed = n
			break
		}
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return err
		}
		log.Warn("outbox: results: write failed", "results", len(results), "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.cfg.Clock.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
	// Written, so committed even when the consumer is stopping: otherwise a
	// clean stop reads the last batch again. A failed commit only means these
	// results may be read again (Finish ignores a result it already has).
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	if err := r.CommitMessages(cctx, batch...); err != nil {
		log.Warn("outbox: results: commit offsets", "messages", len(batch), "err", err)
	}
	if c.cfg.OnApply != nil {
		c.cfg.OnApply(len(batch), changed)
	}
	return nil
}

// commitTimeout bounds the commit of a written batch's offsets.
const commitTimeout = 5 * time.Second
