package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"
)

// RelayConfig tunes a Relay; the zero value is ready to use.
type RelayConfig struct {
	// Interval is the sweep period while all is well and the longest wait
	// between retries while publishing fails; 0 means 10 s.
	Interval time.Duration
	// MinBackoff is the first wait after a failed pass; it doubles with
	// each failure up to Interval. 0 means 1 s.
	MinBackoff time.Duration
	// BatchSize bounds the intents one publish carries; 0 means 500.
	BatchSize int
	Clock     clockwork.Clock
	Logger    *slog.Logger
	// OnPass, when set, hears the outcome of every pass of Run (metrics, tests).
	OnPass func(published int, err error)
}

// Relay moves accepted intents from the store to the broker and marks them
// published. It publishes at start (intents a crash left behind), when
// kicked after an accept, and every Interval; after a failure it backs
// off. Delivery is at least once: a crash between publish and mark
// publishes again, and consumers drop the duplicate by intent id.
type Relay struct {
	store Store
	pub   Publisher
	cfg   RelayConfig
	kick  chan struct{}
}

// NewRelay returns a relay from store to pub. Run one relay per store.
func NewRelay(store Store, pub Publisher, cfg RelayConfig) *Relay {
	if cfg.Interval <= 0 {
		cfg.Interval = 10 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MinBackoff > cfg.Interval {
		cfg.MinBackoff = cfg.Interval
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if cfg.Clock == nil {
		cfg.Clock = clockwork.NewRealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Relay{store: store, pub: pub, cfg: cfg, kick: make(chan struct{}, 1)}
}

// Kick asks for a pass soon. It never blocks: kicks while a pass is due
// fold into one. While the relay backs off after a failure, kicks wait for
// the backoff, so a down broker is not hammered once per accept.
func (r *Relay) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Flush publishes every pending intent now, batch by batch, and returns how
// many it published. It stops at the first failure.
func (r *Relay) Flush(ctx context.Context) (int, error) {
	total := 0
	for {
		batch, err := r.store.Pending(ctx, r.cfg.BatchSize)
		if err != nil {
			return total, err
		}
		if len(batch) == 0 {
			return total, nil
		}
		ids, perr := r.pub.Publish(ctx, batch)
		if len(ids) > 0 {
			if err := r.store.MarkPublished(ctx, ids); err != nil {
				return total, err
			}
			total += len(ids)
		}
		if perr != nil {
			return total, perr
		}
		if len(batch) < r.cfg.BatchSize {
			return total, nil
		}
	}
}

// Run passes until ctx ends or the store is closed, and returns nil then.
func (r *Relay) Run(ctx context.Context) error {
	log := r.cfg.Logger
	failures := 0
	for {
		// A kick that came before this pass is served by it.
		select {
		case <-r.kick:
		default:
		}
		n, err := r.Flush(ctx)
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return nil
		}
		if r.cfg.OnPass != nil {
			r.cfg.OnPass(n, err)
		}
		wait := r.cfg.Interval
		if err != nil {
			failures++
			wait = r.backoff(failures)
			log.Warn("outbox: relay: publish failed", "published", n, "failures", failures, "retry_in", wait, "err", err)
		} else {
			if failures > 0 {
				log.Info("outbox: relay: publishing again", "published", n, "after_failures", failures)
			}
			failures = 0
		}
		var kick <-chan struct{}
		if failures == 0 {
			kick = r.kick
		}
		t := r.cfg.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.Chan():
		case <-kick:
			t.Stop()
		}
	}
}

func (r *Relay) backoff(failures int) time.Duration {
	d := r.cfg.MinBackoff
	for i := 1; i < failures && d < r.cfg.Interval; i++ {
		d *= 2
	}
	return min(d, r.cfg.Interval)
}
