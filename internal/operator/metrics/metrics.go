// Package metrics exposes waitroom's Prometheus metrics: the state of rooms,
// push, degraded mode, the outbox, adaptive activation and the gate, read
// from their owners at scrape time, and counters of Redis, waits, Kafka and
// transitions updated as things happen.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/queue"
)

const namespace = "waitroom"

// RoomStats lists rooms and reads their counters; queue.Store is one.
type RoomStats interface {
	ListRooms(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, room string, now time.Time) (queue.Stats, error)
}

// HubStats is the push hub's snapshot; *push.Hub is one.
type HubStats interface{ Stats() push.Stats }

// HubFunc adapts a func to HubStats, e.g. a hub built after the metrics.
type HubFunc func() push.Stats

func (f HubFunc) Stats() push.Stats { return f() }

// DegradedFlag is the availability flag; *queue.Availability is one.
type DegradedFlag interface{ Degraded() bool }

// OutboxCounts counts intents by status; *outbox.Outbox is one.
type OutboxCounts interface {
	Counts(ctx context.Context) (outbox.Counts, error)
}

// OutboxWrites counts the writes the outbox's disk refused; *outbox.Outbox
// is one. An Outbox source that has it reports outbox_write_failures_total.
type OutboxWrites interface{ WriteFailures() int64 }

// Activation is every adaptive room's state; *adaptive.Controller is one.
type Activation interface {
	States() map[string]adaptive.State
}

// Gate is what the checkout gate measures of its upstream; the same shape as
// adaptive.GateStats.
type Gate interface {
	InFlight() int64
	P95() time.Duration
}

// Sources are read at scrape time; a nil source leaves its series out.
type Sources struct {
	Rooms      RoomStats
	Hub        HubStats
	Avail      DegradedFlag
	Outbox     OutboxCounts
	Activation Activation
	Gate       Gate
	Admitter   Admitter
	Now        func() time.Time // time.Now when nil
	Logger     *slog.Logger     // slog.Default() when nil
}

// Metrics holds the series updated as things happen; the rest are read from
// Sources when Prometheus scrapes.
type Metrics struct {
	gatherer prometheus.Gatherer

	redisDuration *prometheus.HistogramVec
	redisErrors   *prometheus.CounterVec
	wait          *prometheus.HistogramVec
	kafkaErrors   prometheus.Counter
	transitions   *prometheus.CounterVec
	own           []prometheus.Collector // all of the above and the collectors
}

// NewRegistry returns a registry with the Go runtime and process collectors,
// for New and Handler.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// New registers waitroom's metrics with reg, which Handler also serves, so
// it must be a Gatherer too (a *prometheus.Registry is).
func New(reg prometheus.Registerer, src Sources) (*Metrics, error) {
	g, ok := reg.(prometheus.Gatherer)
	if !ok {
		return nil, errors.New("metrics: new: the registerer must also be a prometheus.Gatherer")
	}
	if src.Now == nil {
		src.Now = time.Now
	}
	if src.Logger == nil {
		src.Logger = slog.Default()
	}
	m := &Metrics{
		gatherer: g,
		redisDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "redis", Name: "command_duration_seconds",
			Help:    "Time of Redis commands and pipelines as this server saw them, by command (pipeline for a pipeline).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"cmd"}),
		redisErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "redis", Name: "errors_total",
			Help: "Failed Redis commands by command and kind: unreachable (network, timeout) or reply (Redis answered an error).",
		}, []string{"cmd", "kind"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "wait_seconds",
			Help:    "Time from entering the line to admission of visitors admitted by the line, by room.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200},
		}, []string{"room"}),
		kafkaErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "kafka", Name: "publish_errors_total",
			Help: "Failed publishes of degraded-mode intents to Kafka (each failed relay pass).",
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "activation", Name: "transitions_total",
			Help: "Adaptive lines opened or closed by this server's evaluations, by room and new state (open, closed).",
		}, []string{"room", "to"}),
	}
	m.own = []prometheus.Collector{m.redisDuration, m.redisErrors, m.wait, m.kafkaErrors, m.transitions, newCollector(src), newCapacityCollector(src), newAdmitterCollector(src.Admitter)}
	for _, c := range m.own {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	return m, nil
}

// ObserveWait records the wait of one visitor admitted from room's line:
// admitted at − entered at.
func (m *Metrics) ObserveWait(room string, d time.Duration) {
	m.wait.WithLabelValues(room).Observe(d.Seconds())
}

// KafkaPublishError counts one failed publish to Kafka.
func (m *Metrics) KafkaPublishError() { m.kafkaErrors.Inc() }

// Transition counts an adaptive line opening or closing.
func (m *Metrics) Transition(room string, open bool) {
	to := "closed"
	if open {
		to = "open"
	}
	m.transitions.WithLabelValues(room, to).Inc()
}

// Names are the metric families waitroom itself registers (the Go runtime's
// and the process's aside), including those that show on /metrics only
// after their first event (a Redis error, a wait observed): dashboards and
// alert rules are checked against them.
func Names() []string {
	m, err := New(prometheus.NewRegistry(), Sources{})
	if err != nil {
		return nil
	}
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range m.own {
			c.Describe(ch)
		}
		close(ch)
	}()
	var out []string
	for d := range ch {
		// Desc has no name getter; its String is `Desc{fqName: "name", ...}`.
		s := d.String()
		if i := strings.Index(s, `fqName: "`); i >= 0 {
			rest := s[i+len(`fqName: "`):]
			if j := strings.IndexByte(rest, '"'); j > 0 {
				out = append(out, rest[:j])
			}
		}
	}
	return out
}
