package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// checkout is the test checkout behind waitroom's gate: a fixed pool of
// workers, each taking one order at a time for a fixed service time, with
// the orders that find every worker busy queued (first come, first served).
// That is how a real order API slows with concurrency: its threads and
// database connections are a fixed pool (the seed's is a Spring service), so
// fifty orders at once mostly wait for a connection, while the same fifty
// spread over a second find one free. A sleep stands for the work so that
// the numbers measure queueing, not this shared machine's CPU noise.
type checkout struct {
	service time.Duration
	jobs    chan chan struct{}

	mu       sync.Mutex
	inFlight int       // orders in the handler: queued or in service
	peak     int       // most in flight since the last take
	lat      []float64 // arrival to answer, ms, since the last take
	refused  int       // orders refused: queue full
}

// newCheckout starts workers workers; at most queue orders wait beyond them.
func newCheckout(ctx context.Context, workers, queue int, service time.Duration) *checkout {
	c := &checkout{service: service, jobs: make(chan chan struct{}, queue)}
	for range workers {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case done := <-c.jobs:
					time.Sleep(c.service)
					close(done)
				}
			}
		}()
	}
	return c
}

func (c *checkout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	c.mu.Lock()
	c.inFlight++
	c.peak = max(c.peak, c.inFlight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	done := make(chan struct{})
	select {
	case c.jobs <- done:
	default:
		c.mu.Lock()
		c.refused++
		c.mu.Unlock()
		http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
		return
	}
	select {
	case <-done:
	case <-r.Context().Done():
		return
	}
	d := time.Since(start)
	c.mu.Lock()
	c.lat = append(c.lat, msOf(d))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"order":"placed"}` + "\n"))
}

// checkoutStats is what the checkout saw of one run.
type checkoutStats struct {
	Latency      dist `json:"latency"` // arrival to answer, at the checkout
	PeakInFlight int  `json:"peak_in_flight"`
	Refused      int  `json:"refused"`
}

// take returns the stats since the last take and starts afresh.
func (c *checkout) take() checkoutStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := checkoutStats{Latency: summarize(c.lat), PeakInFlight: c.peak, Refused: c.refused}
	c.lat, c.peak, c.refused = nil, c.inFlight, 0
	return s
}

// serveCheckout serves c on addr (loopback) until ctx ends.
func serveCheckout(ctx context.Context, addr string, c *checkout) (func(), error) {
	if err := checkLoopbackAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}
