package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// TestScrape: every source shows at scrape time, with its values, and the
// counters updated through methods show beside them.
func TestScrape(t *testing.T) {
	ctx := context.Background()
	store := redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t))
	s := queue.DefaultSettings()
	s.Capacity = 1
	if err := store.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, id := range []string{"a", "b", "c"} { // one takes the only slot, two wait
		if _, err := store.Enter(ctx, "sale", &s, queue.AdmitLine, "v:"+id, "ticket-"+id, now, 0, queue.EntryProof{}); err != nil {
			t.Fatal(err)
		}
	}
	reading := 0.82
	var avail flag
	m, reg := newMetrics(t, metrics.Sources{
		Rooms: store,
		Hub: metrics.HubFunc(func() push.Stats {
			return push.Stats{Connections: map[string]int{"ws": 3}, Tickets: 2, Sent: 40, SlowDisconnects: 1, FetchErrors: 2}
		}),
		Avail:  &avail,
		Outbox: fakeOutbox{counts: outbox.Counts{Accepted: 4, Published: 3, Processed: 2, Rejected: 1}},
		Activation: fakeActivation{"sale": {Open: true, Reading: &reading, Reason: "reading 0.82 reached open_at 0.7"},
			"cool": {SignalError: "signal unavailable: timeout"}},
		Gate: fakeGate{},
		Now:  func() time.Time { return now },
	})
	m.ObserveWait("sale", 42*time.Second)
	m.ObserveWait("sale", 3*time.Second)
	m.Transition("sale", true)
	m.KafkaPublishError()

	want := `
# HELP waitroom_room_waiting Visitors waiting in the line. Read from Redis: every server reports the same deployment-wide value, so aggregate with max by (room), never sum.
# TYPE waitroom_room_waiting gauge
waitroom_room_waiting{room="sale"} 2
# HELP waitroom_room_active Admitted visitors holding a checkout slot. Deployment-wide (from Redis): max by (room), never sum.
# TYPE waitroom_room_active gauge
waitroom_room_active{room="sale"} 1
# HELP waitroom_room_entered_total Tickets created by enter. Deployment-wide (from Redis): max by (room), never sum.
# TYPE waitroom_room_entered_total counter
waitroom_room_entered_total{room="sale"} 3
# HELP waitroom_room_admitted_total Tickets admitted (by the line, the fast track or an open room). Deployment-wide (from Redis): max by (room), never sum.
# TYPE waitroom_room_admitted_total counter
waitroom_room_admitted_total{room="sale"} 1
# HELP waitroom_room_line_open 1 while an adaptive room's line is open, 0 while it admits at once.
# TYPE waitroom_room_line_open gauge
waitroom_room_line_open{room="cool"} 0
waitroom_room_line_open{room="sale"} 1
# HELP waitroom_room_activation_reading The last reading of an adaptive room's load signal.
# TYPE waitroom_room_activation_reading gauge
waitroom_room_activation_reading{room="sale"} 0.82
# HELP waitroom_room_activation_signal_up 1 when the last read of an adaptive room's signal succeeded.
# TYPE waitroom_room_activation_signal_up gauge
waitroom_room_activation_signal_up{room="cool"} 0
waitroom_room_activation_signal_up{room="sale"} 1
# HELP waitroom_push_connections Open push connections by transport.
# TYPE waitroom_push_connections gauge
waitroom_push_connections{transport="sse"} 0
waitroom_push_connections{transport="ws"} 3
# HELP waitroom_push_messages_total Push messages written, first messages included.
# TYPE waitroom_push_messages_total counter
waitroom_push_messages_total 40
# HELP waitroom_degraded 1 while this server runs in degraded mode (Redis unusable or a drill).
# TYPE waitroom_degraded gauge
waitroom_degraded 0
# HELP waitroom_outbox_intents Degraded-mode intents in this server's outbox by state.
# TYPE waitroom_outbox_intents gauge
waitroom_outbox_intents{state="accepted"} 4
waitroom_outbox_intents{state="processed"} 2
waitroom_outbox_intents{state="published"} 3
waitroom_outbox_intents{state="rejected"} 1
# HELP waitroom_gate_upstream_inflight Requests the gate has in flight to checkout.
# TYPE waitroom_gate_upstream_inflight gauge
waitroom_gate_upstream_inflight 7
# HELP waitroom_gate_upstream_latency_p95_seconds p95 latency of the gate's recent requests to checkout.
# TYPE waitroom_gate_upstream_latency_p95_seconds gauge
waitroom_gate_upstream_latency_p95_seconds 0.35
# HELP waitroom_metrics_source_up 1 when the last scrape could read the source (rooms, outbox).
# TYPE waitroom_metrics_source_up gauge
waitroom_metrics_source_up{source="outbox"} 1
waitroom_metrics_source_up{source="rooms"} 1
# HELP waitroom_kafka_publish_errors_total Failed publishes of degraded-mode intents to Kafka (each failed relay pass).
# TYPE waitroom_kafka_publish_errors_total counter
waitroom_kafka_publish_errors_total 1
# HELP waitroom_activation_transitions_total Adaptive lines opened or closed by this server's evaluations, by room and new state (open, closed).
# TYPE waitroom_activation_transitions_total counter
waitroom_activation_transitions_total{room="sale",to="open"} 1
# HELP waitroom_wait_seconds Time from entering the line to admission of visitors admitted by the line, by room.
# TYPE waitroom_wait_seconds histogram
waitroom_wait_seconds_bucket{room="sale",le="1"} 0
waitroom_wait_seconds_bucket{room="sale",le="5"} 1
waitroom_wait_seconds_bucket{room="sale",le="15"} 1
waitroom_wait_seconds_bucket{room="sale",le="30"} 1
waitroom_wait_seconds_bucket{room="sale",le="60"} 2
waitroom_wait_seconds_bucket{room="sale",le="120"} 2
waitroom_wait_seconds_bucket{room="sale",le="300"} 2
waitroom_wait_seconds_bucket{room="sale",le="600"} 2
waitroom_wait_seconds_bucket{room="sale",le="900"} 2
waitroom_wait_seconds_bucket{room="sale",le="1800"} 2
waitroom_wait_seconds_bucket{room="sale",le="3600"} 2
waitroom_wait_seconds_bucket{room="sale",le="7200"} 2
waitroom_wait_seconds_bucket{room="sale",le="+Inf"} 2
waitroom_wait_seconds_sum{room="sale"} 45
waitroom_wait_seconds_count{room="sale"} 2
`
	names := []string{"waitroom_room_waiting", "waitroom_room_active", "waitroom_room_entered_total",
		"waitroom_room_admitted_total", "waitroom_room_line_open", "waitroom_room_activation_reading",
		"waitroom_room_activation_signal_up", "waitroom_push_connections", "waitroom_push_messages_total",
		"waitroom_degraded", "waitroom_outbox_intents", "waitroom_gate_upstream_inflight",
		"waitroom_gate_upstream_latency_p95_seconds", "waitroom_metrics_source_up",
		"waitroom_kafka_publish_errors_total", "waitroom_activation_transitions_total", "waitroom_wait_seconds"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"waitroom_room_abandoned_total", "waitroom_room_expired_total",
		"waitroom_room_completed_total", "waitroom_room_admitted_rate", "waitroom_push_tickets",
		"waitroom_push_slow_disconnects_total", "waitroom_push_fetch_errors_total"} {
		if _, ok := value(t, reg, name); !ok {
			t.Errorf("no series %s", name)
		}
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}

	// The same through HTTP, from loopback with no guard configured.
	srv := httptest.NewServer(m.Handler(metrics.Guard{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `waitroom_room_waiting{room="sale"} 2`) {
		t.Fatalf("scrape: %d\n%s", resp.StatusCode, body)
	}
}

// TestScrapeDegraded: in degraded mode a scrape does not ask Redis.
func TestScrapeDegraded(t *testing.T) {
	rooms := &countingRooms{}
	var avail flag
	_, reg := newMetrics(t, metrics.Sources{Rooms: rooms, Avail: &avail})
	if v, _ := value(t, reg, "waitroom_room_waiting", "room", "sale"); v != 1 || rooms.calls.Load() != 2 {
		t.Fatalf("normal scrape: waiting %v after %d calls", v, rooms.calls.Load())
	}
	avail.on.Store(true)
	if _, ok := value(t, reg, "waitroom_room_waiting", "room", "sale"); ok || rooms.calls.Load() != 2 {
		t.Fatalf("degraded scrape asked Redis (%d calls)", rooms.calls.Load())
	}
	if v, _ := value(t, reg, "waitroom_degraded"); v != 1 {
		t.Fatal("degraded not shown")
	}
	if v, ok := value(t, reg, "waitroom_metrics_source_up", "source", "rooms"); !ok || v != 0 {
		t.Fatal("rooms not shown down while degraded")
	}
}

// TestScrapeSourceFails: a source that fails leaves its series out, shows
// as down, and is logged once per change, not per scrape.
func TestScrapeSourceFails(t *testing.T) {
	logs := &syncBuffer{}
	rooms := &countingRooms{err: errBroken}
	_, reg := newMetrics(t, metrics.Sources{Rooms: rooms, Outbox: fakeOutbox{err: errBroken},
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	for i := 0; i < 3; i++ {
		if _, ok := value(t, reg, "waitroom_outbox_intents", "state", "accepted"); ok {
			t.Fatal("intents shown from a failed read")
		}
	}
	if v, ok := value(t, reg, "waitroom_metrics_source_up", "source", "outbox"); !ok || v != 0 {
		t.Fatal("outbox not shown down")
	}
	if n := strings.Count(logs.String(), "metrics: cannot read source"); n != 2 {
		t.Fatalf("%d log lines for two sources failing over 4 scrapes:\n%s", n, logs)
	}
	rooms.err = nil
	if v, _ := value(t, reg, "waitroom_metrics_source_up", "source", "rooms"); v != 1 {
		t.Fatal("rooms not back up")
	}
	if !strings.Contains(logs.String(), `metrics: source readable again" source=rooms`) {
		t.Fatalf("recovery not logged:\n%s", logs)
	}
}

var _ metrics.Activation = (*adaptive.Controller)(nil)
