package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/queue"
)

type flag struct{ on atomic.Bool }

func (f *flag) Degraded() bool { return f.on.Load() }

type fakeOutbox struct {
	counts outbox.Counts
	err    error
}

func (o fakeOutbox) Counts(context.Context) (outbox.Counts, error) { return o.counts, o.err }

type fakeActivation map[string]adaptive.State

func (a fakeActivation) States() map[string]adaptive.State { return a }

type fakeGate struct{}

func (fakeGate) InFlight() int64    { return 7 }
func (fakeGate) P95() time.Duration { return 350 * time.Millisecond }

// countingRooms fails the test's expectations if Redis is asked when it must not be.
type countingRooms struct {
	calls atomic.Int64
	err   error
}

func (r *countingRooms) ListRooms(context.Context) ([]string, error) {
	r.calls.Add(1)
	if r.err != nil {
		return nil, r.err
	}
	return []string{"sale"}, nil
}

func (r *countingRooms) Stats(context.Context, string, time.Time) (queue.Stats, error) {
	r.calls.Add(1)
	return queue.Stats{Waiting: 1}, nil
}

var errBroken = errors.New("broken")

// syncBuffer collects log output from concurrent scrapes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newMetrics(t *testing.T, src metrics.Sources) (*metrics.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	if src.Logger == nil {
		src.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := metrics.New(reg, src)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// value returns the value of the series name{labels}, and whether it exists;
// a histogram's value is its sample count.
func value(t *testing.T, g prometheus.Gatherer, name string, labels ...string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, kv []string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == kv[i] && l.GetValue() == kv[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
