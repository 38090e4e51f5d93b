package gatekit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

func TestMeterPercentilesAndWindow(t *testing.T) {
	clock := clockwork.NewFakeClock()
	m := NewMeter(MeterOptions{Clock: clock, Window: time.Minute})
	if m.P95() != 0 || m.InFlight() != 0 {
		t.Fatal("a new meter has no calls")
	}
	for i := 1; i <= 100; i++ {
		start := m.Begin()
		clock.Advance(time.Duration(i) * time.Millisecond)
		m.Answered(start, i == 100)
		m.End()
	}
	s := m.Snapshot()
	if s.P95 != 95*time.Millisecond || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond {
		t.Errorf("p50/p95/p99 = %v/%v/%v, want 50/95/99 ms", s.P50, s.P95, s.P99)
	}
	if s.Calls != 100 || s.Failures != 1 || s.Samples != 100 || s.PeakInFlight != 1 || s.InFlight != 0 {
		t.Errorf("snapshot = %+v", s)
	}
	if s.P95MS != 95 || s.WindowS != 60 {
		t.Errorf("p95_ms = %v, window_s = %v", s.P95MS, s.WindowS)
	}
	clock.Advance(time.Minute)
	if s := m.Snapshot(); s.Samples != 0 || s.P95 != 0 || s.Calls != 100 {
		t.Errorf("after the window: %+v, want no samples and the totals kept", s)
	}
}

func TestMeterRingKeepsTheLastCalls(t *testing.T) {
	clock := clockwork.NewFakeClock()
	m := NewMeter(MeterOptions{Clock: clock, Samples: 10})
	for i := 1; i <= 25; i++ {
		start := m.Begin()
		clock.Advance(time.Duration(i) * time.Millisecond)
		m.Answered(start, false)
		m.End()
	}
	if s := m.Snapshot(); s.Samples != 10 || s.P95 != 25*time.Millisecond || s.P50 != 20*time.Millisecond {
		t.Errorf("snapshot = %+v, want the last 10 calls (16..25 ms)", s)
	}
}

func TestMeterTransportHoldsUntilBodyClosed(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusBadGateway)
		}
		_, _ = io.WriteString(w, "hello")
	}))
	defer up.Close()
	m := NewMeter(MeterOptions{})
	c := &http.Client{Transport: m.Transport(http.DefaultTransport)}
	res, err := c.Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	if m.InFlight() != 1 {
		t.Errorf("in flight before the body is read = %d, want 1", m.InFlight())
	}
	_, _ = io.ReadAll(res.Body)
	res.Body.Close()
	res.Body.Close() // twice is harmless
	if m.InFlight() != 0 {
		t.Errorf("in flight after close = %d, want 0", m.InFlight())
	}
	res, err = c.Get(up.URL + "/fail")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if _, err := c.Get("http://127.0.0.1:1/"); err == nil {
		t.Fatal("want a dial error")
	}
	if s := m.Snapshot(); s.Calls != 3 || s.Failures != 2 || s.InFlight != 0 || s.Samples != 3 {
		t.Errorf("snapshot = %+v, want 3 calls, 2 failures, none in flight", s)
	}
}

func TestMeterHandler(t *testing.T) {
	clock := clockwork.NewFakeClock()
	m := NewMeter(MeterOptions{Clock: clock})
	var during int64
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during = m.InFlight()
		clock.Advance(40 * time.Millisecond)
		w.WriteHeader(http.StatusCreated)
		clock.Advance(time.Second) // the body is not latency
		_, _ = io.WriteString(w, strings.Repeat("x", 10))
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if during != 1 || m.InFlight() != 0 || w.Code != http.StatusCreated {
		t.Errorf("in flight during/after = %d/%d, code %d", during, m.InFlight(), w.Code)
	}
	if p := m.P95(); p != 40*time.Millisecond {
		t.Errorf("p95 = %v, want 40ms (time to headers)", p)
	}
}
