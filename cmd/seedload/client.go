package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// ticketMsg is what seedload reads of the ticket JSON (enter, status, push).
type ticketMsg struct {
	Ticket       string      `json:"ticket"`
	State        vocab.State `json:"state"`
	Position     int64       `json:"position"`
	NextUpdateMS int64       `json:"next_update_ms"`
	Token        string      `json:"token"`
	OrderableAt  string      `json:"orderable_at"`
}

// api talks to one waitroom over loopback.
type api struct {
	base, admin string
	http        *http.Client
}

func newAPI(base, admin string, conns int) *api {
	dial := (&net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly}).DialContext
	return &api{base: base, admin: admin, http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: dial, MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns,
		IdleConnTimeout: 90 * time.Second, DisableCompression: true,
	}}}
}

// room is the part of a room's settings seedload sets; the rest keep their
// defaults.
type room struct {
	Capacity      int64  `json:"capacity"`
	BatchSize     int64  `json:"batch_size"`
	BatchInterval int64  `json:"batch_interval_ms"`
	Jitter        int64  `json:"jitter_ms"`
	Paused        bool   `json:"paused"`
	Tiers         []tier `json:"tiers,omitempty"`
	// The benchmark measures the line, not what a place costs, nor how one
	// address's admitted visitors come to checkout (they never do).
	BotProtection map[string]any `json:"bot_protection"`
	Title         string         `json:"title"`
}

type tier struct {
	MaxPosition *int64 `json:"max_position"`
	IntervalMS  int64  `json:"interval_ms"`
}

// seedTiers are the seed's: positions 1–100 every 2 s, 101–500 every 5 s,
// beyond every 10 s.
func seedTiers() []tier {
	p100, p500 := int64(100), int64(500)
	return []tier{{&p100, 2000}, {&p500, 5000}, {nil, 10000}}
}

func (a *api) putRoom(ctx context.Context, id string, r room) error {
	r.BotProtection = map[string]any{"proof_of_work": "off", "unarrived_per_network": 0}
	body, _ := json.Marshal(r)
	_, err := a.admin_(ctx, http.MethodPut, id, body)
	return err
}

func (a *api) deleteRoom(ctx context.Context, id string) error {
	_, err := a.admin_(ctx, http.MethodDelete, id, nil)
	return err
}

func (a *api) admin_(ctx context.Context, method, id string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, a.base+"/admin/api/rooms/"+url.PathEscape(id), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.admin)
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s room %s: %w", method, id, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s room %s: %s: %s", method, id, resp.Status, b)
	}
	return b, nil
}

// enter enters room as a new visitor: its ticket and visitor cookie
// ("wr_vid=…").
func (a *api) enter(ctx context.Context, id string) (ticketMsg, string, error) {
	var m ticketMsg
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/api/rooms/"+url.PathEscape(id)+"/enter", bytes.NewReader([]byte("{}")))
	if err != nil {
		return m, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return m, "", errors.New("transport")
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return m, "", errors.New("transport")
	}
	if resp.StatusCode != http.StatusOK {
		return m, "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Ticket == "" {
		return m, "", errors.New("bad ticket JSON")
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "wr_vid" {
			return m, ck.Name + "=" + ck.Value, nil
		}
	}
	return m, "", errors.New("no wr_vid cookie")
}

// enterAll enters n visitors, at most par at once, giving up after limit.
// Each entered visitor is handed to then, which runs on its own goroutine
// for as long as it likes; enterAll returns once every enter is through.
func (a *api) enterAll(ctx context.Context, id string, n, par int, limit time.Duration, errs *counts, then func(m ticketMsg, cookie string)) (int, error) {
	ectx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	var entered atomic.Int64
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ectx.Done():
		}
		if ectx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			// A failed enter is counted and tried again, a few times.
			for try := 0; try < 5 && ectx.Err() == nil; try++ {
				m, cookie, err := a.enter(ectx, id)
				if err != nil {
					errs.add("enter: " + err.Error())
					continue
				}
				entered.Add(1)
				<-sem
				wg.Done()
				then(m, cookie)
				return
			}
			<-sem
			wg.Done()
		}()
	}
	wg.Wait()
	if got := int(entered.Load()); got < n {
		return got, fmt.Errorf("entered %d of %d visitors within %s", got, n, limit)
	}
	return n, nil
}

// counts is a small concurrent tally, e.g. of errors by kind.
type counts struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counts) add(k string) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[k]++
	c.mu.Unlock()
}

func (c *counts) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.m))
	for k, v := range c.m {
		out[k] = v
	}
	return out
}

// dist summarises samples in milliseconds.
type dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func summarize(ms []float64) dist {
	if len(ms) == 0 {
		return dist{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	q := func(p float64) float64 {
		// Nearest rank: the smallest sample with at least p of them at or below it.
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return dist{N: len(s), P50: q(0.50), P95: q(0.95), P99: q(0.99), Max: s[len(s)-1]}
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
