package adaptive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/queue"
)

func TestOpensAtThreshold(t *testing.T) {
	e := newEnv(t)
	s := e.putRoom("sale")
	e.prom.script(answer{status: 503, body: "starting"})
	c := e.start(adaptive.Options{Signal: adaptive.Signals{queue.SignalPrometheus: adaptive.NewPrometheusSignal(nil)}})
	if !c.Open("unknown") {
		t.Fatal("a room the controller has not read yet must keep its line")
	}
	// The first read of a new room fails: the room stays closed, saying why.
	st := e.state(c, "sale")
	if st.Open || c.Open("sale") || st.Reason == "" || st.Why.Cause != adaptive.CauseNew || !strings.HasPrefix(st.SignalError, "signal unavailable: ") {
		t.Fatalf("new room: %+v", st)
	}
	if q, _ := e.prom.query.Load().(string); q != s.Adaptive.Query {
		t.Fatalf("query sent %q, want %q", q, s.Adaptive.Query)
	}

	e.nextWindow(reading(0.69))
	if st = e.state(c, "sale"); st.Open || st.Reading == nil || *st.Reading != 0.69 || st.SignalError != "" {
		t.Fatalf("0.69 < open_at 0.7 must stay closed: %+v", st)
	}
	e.noTransition()

	// Polls within the window re-read the state but not the signal.
	e.advance(time.Second)
	if n := e.prom.requests.Load(); n != 2 {
		t.Fatalf("%d reads after two windows, want 2", n)
	}

	e.nextWindow(reading(0.70))
	st = e.state(c, "sale")
	if !st.Open || !c.Open("sale") || st.Transitions != 1 || !st.Since.Equal(e.clock.Now().UTC().Truncate(time.Millisecond)) {
		t.Fatalf("0.70 = open_at must open: %+v", st)
	}
	if !strings.Contains(st.Reason, "reading 0.7 reached open_at 0.7") {
		t.Fatalf("reason %q does not name the reading", st.Reason)
	}
	if st.Why != (adaptive.Why{Cause: adaptive.CauseOpened, Reading: 0.7, Threshold: 0.7}) {
		t.Fatalf("why %+v does not name the reading", st.Why)
	}
	if tr := e.transition(); tr.Room != "sale" || !tr.Open || tr.Reading != 0.7 {
		t.Fatalf("transition %+v", tr)
	}
	if n := e.logs.count("adaptive: line opened"); n != 1 {
		t.Fatalf("%d log lines for one opening", n)
	}

	// Another server starting now agrees, from Redis, without reading the signal.
	other := e.start(adaptive.Options{})
	if !other.Open("sale") || e.prom.requests.Load() != 3 {
		t.Fatalf("second server: open %v after %d reads", other.Open("sale"), e.prom.requests.Load())
	}
}

func TestClosesAfterWindowsBelow(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale")
	e.prom.script(reading(0.95))
	c := e.start(adaptive.Options{})
	if !c.Open("sale") {
		t.Fatal("0.95 must open a new room at once")
	}
	e.transition()

	for i, v := range []float64{0.4, 0.45, 0.5, 0.3, 0.49} { // 0.5 is not below close_at: the run restarts
		e.nextWindow(reading(v))
		if !c.Open("sale") {
			t.Fatalf("closed after reading %d (%v)", i, v)
		}
	}
	if st := e.state(c, "sale"); st.Below != 2 {
		t.Fatalf("below = %d after two low readings, want 2", st.Below)
	}
	e.noTransition()

	e.nextWindow(reading(0.1))
	st := e.state(c, "sale")
	if st.Open || c.Open("sale") || st.Transitions != 2 || st.Below != 0 {
		t.Fatalf("three windows below close_at must close: %+v", st)
	}
	if want := "3 windows in a row below close_at 0.5, last reading 0.1"; st.Reason != want {
		t.Fatalf("reason %q, want %q", st.Reason, want)
	}
	if want := (adaptive.Why{Cause: adaptive.CauseClosed, Reading: 0.1, Threshold: 0.5, Windows: 3}); st.Why != want {
		t.Fatalf("why %+v, want %+v", st.Why, want)
	}
	if tr := e.transition(); tr.Open || tr.Reading != 0.1 {
		t.Fatalf("transition %+v", tr)
	}

	// Closed, a reading between close_at and open_at leaves it closed.
	e.nextWindow(reading(0.6))
	if c.Open("sale") {
		t.Fatal("0.6 < open_at must not reopen")
	}
	e.noTransition()
	if n := e.logs.count("adaptive: line closed"); n != 1 {
		t.Fatalf("%d log lines for one closing", n)
	}
}

func TestHoldsStateWhenSignalFails(t *testing.T) {
	t.Parallel() // its hanging read waits out ReadTimeout in real time
	e := newEnv(t)
	e.putRoom("sale")
	e.prom.script(reading(0.9))
	c := e.start(adaptive.Options{})
	e.transition()
	opened := e.state(c, "sale")

	failures := []struct {
		name string
		a    answer
		want string
	}{
		{"500", answer{status: 500, body: "internal error"}, "answered 500"},
		{"query error", answer{status: 400, body: `{"status":"error","errorType":"bad_data","error":"parse error"}`}, "bad_data parse error"},
		{"garbage", answer{status: 200, body: "<html>proxy</html>"}, "decode answer"},
		{"no samples", answer{status: 200, body: `{"status":"success","data":{"resultType":"vector","result":[]}}`}, "no samples"},
		{"timeout", answer{hang: true}, "deadline exceeded"},
	}
	for _, f := range failures {
		e.nextWindow(f.a)
		st := e.state(c, "sale")
		if !st.Open || st.Reason != opened.Reason || !st.Since.Equal(opened.Since) || *st.Reading != 0.9 {
			t.Fatalf("%s: state changed on a failed read: %+v", f.name, st)
		}
		if !strings.HasPrefix(st.SignalError, "signal unavailable: ") || !strings.Contains(st.SignalError, f.want) {
			t.Fatalf("%s: signal error %q does not say %q", f.name, st.SignalError, f.want)
		}
	}
	if n := e.logs.count("adaptive: signal unavailable"); n != 1 {
		t.Fatalf("%d log lines for one outage", n)
	}

	// A failed read breaks a run of low readings: closing needs three seen.
	for _, a := range []answer{reading(0.2), reading(0.2), {status: 503, body: ""}, reading(0.2), reading(0.2)} {
		e.nextWindow(a)
	}
	if !c.Open("sale") {
		t.Fatal("closed across a failed read")
	}
	e.nextWindow(reading(0.2))
	if c.Open("sale") {
		t.Fatal("three low readings after the failure must close")
	}

	// Closed holds too, and says so.
	e.nextWindow(answer{status: 500})
	st := e.state(c, "sale")
	if st.Open || st.SignalError == "" {
		t.Fatalf("closed room on a failed read: %+v", st)
	}
	e.nextWindow(reading(0.3))
	if st = e.state(c, "sale"); st.Open || st.SignalError != "" || *st.Reading != 0.3 {
		t.Fatalf("after recovery: %+v", st)
	}
	if n := e.logs.count("adaptive: signal readable again"); n != 3 {
		t.Fatalf("%d recovery log lines for three outages", n)
	}
}

// TestOneReadPerWindowAcrossServers: servers share the state in Redis and
// only one of them reads the signal each window.
func TestOneReadPerWindowAcrossServers(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale")
	e.prom.script(reading(0.8))
	servers := []*adaptive.Controller{e.start(adaptive.Options{}), e.start(adaptive.Options{}), e.start(adaptive.Options{})}
	e.advance(time.Second) // every server re-reads what the first one stored
	for i, c := range servers {
		if !c.Open("sale") {
			t.Fatalf("server %d: line closed", i)
		}
	}
	for w := 0; w < 3; w++ {
		e.nextWindow(reading(0.2))
	}
	e.advance(time.Second)
	if n := e.prom.requests.Load(); n != 4 {
		t.Fatalf("%d reads in 4 windows by 3 servers, want 4", n)
	}
	for i, c := range servers {
		if st := e.state(c, "sale"); st.Open || st.Transitions != 2 {
			t.Fatalf("server %d: %+v", i, st)
		}
	}
	if n := len(e.transitions); n != 2 {
		t.Fatalf("%d transitions reported, want 2 (one server reports each)", n)
	}
}

// TestFollowsSettings: rooms that are not adaptive have no state; a room
// made adaptive is read at the next poll, and forgotten when it stops being.
func TestFollowsSettings(t *testing.T) {
	e := newEnv(t)
	plain := queue.DefaultSettings()
	if err := e.store.PutRoom(e.ctx, "plain", plain); err != nil {
		t.Fatal(err)
	}
	c := e.start(adaptive.Options{})
	if _, ok := c.State("plain"); ok {
		t.Fatal("a room with activation always has an adaptive state")
	}
	if e.prom.requests.Load() != 0 {
		t.Fatal("signal read for a room that is not adaptive")
	}
	s := e.putRoom("sale")
	e.prom.script(reading(0.75))
	e.advance(time.Second)
	if !c.Open("sale") {
		t.Fatal("a room made adaptive is not read at the next poll")
	}
	s.Activation = queue.ActivationAlways
	if err := e.store.PutRoom(e.ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Second)
	if _, ok := c.State("sale"); ok {
		t.Fatal("state kept for a room no longer adaptive")
	}
}
