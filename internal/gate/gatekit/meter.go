package gatekit

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// MeterOptions tune a Meter; zero values take the defaults.
type MeterOptions struct {
	Window  time.Duration // latency window (default 60 s)
	Samples int           // most latencies kept (default 4096)
	Clock   clockwork.Clock
}

// Meter measures calls to an upstream: how many are in flight now and how
// long they took to answer over a sliding window. Latencies live in a ring
// of the last Samples calls, so under heavy traffic the window is the
// shorter of Window and those calls: memory and P95's cost stay bounded.
type Meter struct {
	clock  clockwork.Clock
	window time.Duration

	inFlight atomic.Int64
	peak     atomic.Int64
	calls    atomic.Int64
	failures atomic.Int64

	mu   sync.Mutex
	ring []sample
	next int
	full bool
}

type sample struct {
	at time.Time
	d  time.Duration
}

// NewMeter returns a meter with no calls.
func NewMeter(o MeterOptions) *Meter {
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Samples <= 0 {
		o.Samples = 4096
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	return &Meter{clock: o.Clock, window: o.Window, ring: make([]sample, o.Samples)}
}

// Begin counts a call in flight and returns its start.
func (m *Meter) Begin() time.Time {
	n := m.inFlight.Add(1)
	for {
		p := m.peak.Load()
		if n <= p || m.peak.CompareAndSwap(p, n) {
			break
		}
	}
	m.calls.Add(1)
	return m.clock.Now()
}

// Answered records the latency of a call begun at start: the time until
// its answer's headers. failed counts transport errors and 5xx answers.
func (m *Meter) Answered(start time.Time, failed bool) {
	if failed {
		m.failures.Add(1)
	}
	now := m.clock.Now()
	m.mu.Lock()
	m.ring[m.next] = sample{at: now, d: now.Sub(start)}
	m.next++
	if m.next == len(m.ring) {
		m.next, m.full = 0, true
	}
	m.mu.Unlock()
}

// End counts a call out of flight.
func (m *Meter) End() { m.inFlight.Add(-1) }

// InFlight is the number of calls in flight now.
func (m *Meter) InFlight() int64 { return m.inFlight.Load() }

// P95 is the 95th percentile latency over the window; 0 with no calls.
func (m *Meter) P95() time.Duration { return m.Snapshot().P95 }

// Snapshot is the meter at one moment, for the dashboard and activation.
type Snapshot struct {
	InFlight     int64         `json:"in_flight"`
	PeakInFlight int64         `json:"peak_in_flight"` // since start
	Calls        int64         `json:"calls"`          // since start
	Failures     int64         `json:"failures"`       // since start: transport errors and 5xx
	Samples      int           `json:"samples"`        // latencies in the window
	Window       time.Duration `json:"-"`
	P50          time.Duration `json:"-"`
	P95          time.Duration `json:"-"`
	P99          time.Duration `json:"-"`
	WindowS      float64       `json:"window_s"`
	P50MS        float64       `json:"p50_ms"`
	P95MS        float64       `json:"p95_ms"`
	P99MS        float64       `json:"p99_ms"`
}

// Snapshot reads the counters and the window's percentiles.
func (m *Meter) Snapshot() Snapshot {
	since := m.clock.Now().Add(-m.window)
	m.mu.Lock()
	n := m.next
	if m.full {
		n = len(m.ring)
	}
	ds := make([]time.Duration, 0, n)
	for _, s := range m.ring[:n] {
		if s.at.After(since) {
			ds = append(ds, s.d)
		}
	}
	m.mu.Unlock()
	slices.Sort(ds)
	s := Snapshot{
		InFlight: m.inFlight.Load(), PeakInFlight: m.peak.Load(),
		Calls: m.calls.Load(), Failures: m.failures.Load(), Samples: len(ds),
		Window: m.window, P50: quantile(ds, 0.50), P95: quantile(ds, 0.95), P99: quantile(ds, 0.99),
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s.WindowS, s.P50MS, s.P95MS, s.P99MS = m.window.Seconds(), ms(s.P50), ms(s.P95), ms(s.P99)
	return s
}

// quantile is the nearest-rank quantile of sorted ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds))*q+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// Transport measures the round trips of rt: a call is in flight until its
// answer's body is closed, and its latency is the time to the headers.
func (m *Meter) Transport(rt http.RoundTripper) http.RoundTripper {
	return meteredTransport{m: m, rt: rt}
}

type meteredTransport struct {
	m  *Meter
	rt http.RoundTripper
}

func (t meteredTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := t.m.Begin()
	res, err := t.rt.RoundTrip(r)
	if err != nil {
		t.m.Answered(start, true)
		t.m.End()
		return nil, err
	}
	t.m.Answered(start, res.StatusCode >= 500)
	if res.StatusCode == http.StatusSwitchingProtocols {
		// An upgraded connection is no longer a request in flight, and its
		// body must stay an io.ReadWriteCloser for the proxy.
		t.m.End()
		return res, nil
	}
	res.Body = &endOnClose{ReadCloser: res.Body, end: t.m.End}
	return res, nil
}

type endOnClose struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *endOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}

// Handler measures h as the upstream: a call is in flight while h runs,
// and its latency is the time to its first header write.
func (m *Meter) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := m.Begin()
		answered, returned := false, false
		sw := &statusWriter{ResponseWriter: w, onHeader: func(code int) {
			answered = true
			m.Answered(start, code >= 500)
		}}
		defer func() {
			if !answered {
				// Nothing written: net/http sends 200 when h returned; a
				// panic is a failure.
				m.Answered(start, !returned)
			}
			m.End()
		}()
		h.ServeHTTP(sw, r)
		returned = true
	})
}
