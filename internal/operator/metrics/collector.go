package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/internal/vocab"
)

// collectTimeout bounds the Redis and SQLite reads of one scrape.
const collectTimeout = 3 * time.Second

// collector reads Sources at scrape time, so no request pays for metrics.
type collector struct {
	src Sources

	mu   sync.Mutex
	down map[string]bool // sources whose last read failed, to log changes only

	waiting, active, rate                              *prometheus.Desc
	entered, admitted, abandoned, expired, completed   *prometheus.Desc
	lapsed                                             *prometheus.Desc
	lineOpen, reading, signalUp                        *prometheus.Desc
	connections, tickets, sent, slow, fetchErrors      *prometheus.Desc
	degraded, intents, gateInflight, gateP95, sourceUp *prometheus.Desc
	writeFailures                                      *prometheus.Desc
}

func newCollector(src Sources) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
	}
	return &collector{
		src:           src,
		down:          map[string]bool{},
		waiting:       d("room_waiting", "Visitors waiting in the line. Read from Redis: every server reports the same deployment-wide value, so aggregate with max by (room), never sum.", "room"),
		active:        d("room_active", "Admitted visitors holding a checkout slot. Deployment-wide (from Redis): max by (room), never sum.", "room"),
		rate:          d("room_admitted_rate", "Admissions per second over the last minute. Deployment-wide (from Redis): max by (room), never sum.", "room"),
		entered:       d("room_entered_total", "Tickets created by enter. Deployment-wide (from Redis): max by (room), never sum.", "room"),
		admitted:      d("room_admitted_total", "Tickets admitted (by the line, the fast track or an open room). Deployment-wide (from Redis): max by (room), never sum.", "room"),
		abandoned:     d("room_abandoned_total", "Waiters dropped for giving no sign of life. Deployment-wide (from Redis): max by (room), never sum.", "room"),
		expired:       d("room_expired_total", "Admitted slots reclaimed when their session ended or lapsed (room_slots_lapsed_total). Deployment-wide (from Redis): max by (room), never sum.", "room"),
		lapsed:        d("room_slots_lapsed_total", "Admitted slots freed for the next in line before their session ended, by reason: no_show (never came to checkout within arrival_window_s) or idle (no request at the gate for idle_after_s). Deployment-wide (from Redis): max by (room, reason), never sum.", "room", "reason"),
		completed:     d("room_completed_total", "Admitted slots freed by a completed order. Deployment-wide (from Redis): max by (room), never sum.", "room"),
		lineOpen:      d("room_line_open", "1 while an adaptive room's line is open, 0 while it admits at once.", "room"),
		reading:       d("room_activation_reading", "The last reading of an adaptive room's load signal.", "room"),
		signalUp:      d("room_activation_signal_up", "1 when the last read of an adaptive room's signal succeeded.", "room"),
		connections:   d("push_connections", "Open push connections by transport.", "transport"),
		tickets:       d("push_tickets", "Tickets with at least one open push connection."),
		sent:          d("push_messages_total", "Push messages written, first messages included."),
		slow:          d("push_slow_disconnects_total", "Push connections dropped because they did not keep up."),
		fetchErrors:   d("push_fetch_errors_total", "Failed ticket reads of the push hub."),
		degraded:      d("degraded", "1 while this server runs in degraded mode (Redis unusable or a drill)."),
		intents:       d("outbox_intents", "Degraded-mode intents in this server's outbox by state.", "state"),
		writeFailures: d("outbox_write_failures_total", "Outbox writes this server's disk refused (full, read-only, I/O error): each refused intent answered 503, and /readyz is 503 while it lasts. Per server."),
		gateInflight:  d("gate_upstream_inflight", "Requests the gate has in flight to checkout."),
		gateP95:       d("gate_upstream_latency_p95_seconds", "p95 latency of the gate's recent requests to checkout."),
		sourceUp:      d("metrics_source_up", "1 when the last scrape could read the source (rooms, outbox).", "source"),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.waiting, c.active, c.rate, c.entered, c.admitted, c.abandoned, c.expired,
		c.completed, c.lapsed, c.lineOpen, c.reading, c.signalUp, c.connections, c.tickets, c.sent, c.slow, c.fetchErrors,
		c.degraded, c.intents, c.writeFailures, c.gateInflight, c.gateP95, c.sourceUp} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	degraded := false
	if c.src.Avail != nil {
		degraded = c.src.Avail.Degraded()
		gauge(c.degraded, b2f(degraded))
	}
	if c.src.Rooms != nil {
		// In degraded mode Redis is not asked: a scrape must not probe a dead
		// Redis every few seconds, nor wait on its timeouts.
		up := false
		if !degraded {
			err := c.collectRooms(ctx, gauge, counter)
			c.report("rooms", err)
			up = err == nil
		}
		gauge(c.sourceUp, b2f(up), "rooms")
	}
	if a := c.src.Activation; a != nil {
		for room, st := range a.States() {
			gauge(c.lineOpen, b2f(st.Open), room)
			gauge(c.signalUp, b2f(st.SignalError == ""), room)
			if st.Reading != nil {
				gauge(c.reading, *st.Reading, room)
			}
		}
	}
	if h := c.src.Hub; h != nil {
		s := h.Stats()
		for _, tr := range []string{"ws", "sse"} { // both always, so a drop to 0 shows
			gauge(c.connections, float64(s.Connections[tr]), tr)
		}
		for tr, n := range s.Connections {
			if tr != "ws" && tr != "sse" {
				gauge(c.connections, float64(n), tr)
			}
		}
		gauge(c.tickets, float64(s.Tickets))
		counter(c.sent, float64(s.Sent))
		counter(c.slow, float64(s.SlowDisconnects))
		counter(c.fetchErrors, float64(s.FetchErrors))
	}
	if o := c.src.Outbox; o != nil {
		n, err := o.Counts(ctx)
		c.report("outbox", err)
		if err == nil {
			gauge(c.intents, float64(n.Accepted), "accepted")
			gauge(c.intents, float64(n.Published), "published")
			gauge(c.intents, float64(n.Processed), "processed")
			gauge(c.intents, float64(n.Rejected), "rejected")
		}
		gauge(c.sourceUp, b2f(err == nil), "outbox")
		if w, ok := o.(OutboxWrites); ok {
			counter(c.writeFailures, float64(w.WriteFailures()))
		}
	}
	if g := c.src.Gate; g != nil {
		gauge(c.gateInflight, float64(g.InFlight()))
		gauge(c.gateP95, g.P95().Seconds())
	}
}

// collectRooms reports every room's counters it can read, and the first
// error.
func (c *collector) collectRooms(ctx context.Context, gauge, counter func(*prometheus.Desc, float64, ...string)) error {
	rooms, err := c.src.Rooms.ListRooms(ctx)
	if err != nil {
		return err
	}
	var first error
	now := c.src.Now()
	for _, room := range rooms {
		s, err := c.src.Rooms.Stats(ctx, room, now)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		gauge(c.waiting, float64(s.Waiting), room)
		gauge(c.active, float64(s.Active), room)
		gauge(c.rate, s.AdmittedRate, room)
		counter(c.entered, float64(s.EnteredTotal), room)
		counter(c.admitted, float64(s.AdmittedTotal), room)
		counter(c.abandoned, float64(s.AbandonedTotal), room)
		counter(c.expired, float64(s.ExpiredTotal), room)
		counter(c.completed, float64(s.CompletedTotal), room)
		counter(c.lapsed, float64(s.NoShowTotal), room, vocab.ReasonNoShow)
		counter(c.lapsed, float64(s.IdleTotal), room, vocab.ReasonIdle)
	}
	return first
}

// report logs a source going unreadable and readable again, not every scrape.
func (c *collector) report(source string, err error) {
	c.mu.Lock()
	was := c.down[source]
	c.down[source] = err != nil
	c.mu.Unlock()
	switch {
	case err != nil && !was:
		c.src.Logger.Warn("metrics: cannot read source; its series are left out", "source", source, "err", err)
	case err == nil && was:
		c.src.Logger.Info("metrics: source readable again", "source", source)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
