package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// writeHealth follows whether the outbox's disk takes writes. A failing
// disk (full, read-only, I/O error) is an episode: logged once when it
// starts and once when a write lands again, counted on every failed write.
type writeHealth struct {
	mu       sync.Mutex
	failing  bool
	lastErr  error
	since    time.Time
	probedAt time.Time
	failures int64
}

func (h *writeHealth) failed(log *slog.Logger, now time.Time, ops int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failures += int64(ops)
	h.lastErr = err
	if !h.failing {
		h.failing, h.since = true, now
		log.Error("outbox: cannot write: intents are refused (503) and /readyz fails until it can", "err", err)
	}
}

func (h *writeHealth) wrote(log *slog.Logger, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failing {
		h.failing = false
		log.Info("outbox: writes again", "failed_for", now.Sub(h.since).Round(time.Millisecond).String(), "err_was", h.lastErr)
	}
}

// probeEvery bounds the test writes a failing outbox makes to learn that
// it can write again.
const probeEvery = time.Second

// WriteFailures counts writes the disk refused since the start.
func (s *SQLiteStore) WriteFailures() int64 {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.failures
}

// Writable returns nil while the outbox takes writes, else ErrWriteFailed
// with the disk's error. While writes fail it tries a one-row write at most
// once a second, so it turns nil again as soon as the disk takes writes,
// even with no intent coming in.
func (s *SQLiteStore) Writable(ctx context.Context) error {
	if s.closed() {
		return fmt.Errorf("outbox: %w", ErrClosed)
	}
	h := &s.health
	h.mu.Lock()
	failing, last := h.failing, h.lastErr
	probe := failing && s.clock.Since(h.probedAt) >= probeEvery
	if probe {
		h.probedAt = s.clock.Now()
	}
	h.mu.Unlock()
	if !failing {
		return nil
	}
	if !probe {
		return fmt.Errorf("outbox: %w: %w", ErrWriteFailed, last)
	}
	if err := s.do(ctx, &writeOp{kind: opProbe}); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}
