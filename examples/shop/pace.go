package shop

import (
	"context"
	"sync"
	"time"
)

// retry runs fn until it succeeds or ctx ends, backing off between tries.
func (c *Consumer) retry(ctx context.Context, step string, fn func() error) error {
	b := newBackoff()
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d := b.next()
		c.log.Warn("shop: consume: retrying", "step", step, "err", err, "in", d)
		if !c.waitUntil(ctx, c.cfg.Clock.Now().Add(d)) {
			return ctx.Err()
		}
	}
}

// waitUntil waits on the clock for t; false when ctx ended first.
func (c *Consumer) waitUntil(ctx context.Context, t time.Time) bool {
	d := t.Sub(c.cfg.Clock.Now())
	if t.IsZero() || d <= 0 {
		return ctx.Err() == nil
	}
	timer := c.cfg.Clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.Chan():
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff doubles from 100 ms to 5 s.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{} }

func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, 100*time.Millisecond), 5*time.Second)
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

// drainContext is ctx without its cancellation, ended instead a grace period
// after ctx ends. done releases it.
func drainContext(ctx context.Context, grace time.Duration) (context.Context, func()) {
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var timer *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(grace, cancel) // real time: a shutdown deadline, not pacing
	})
	return dctx, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}
