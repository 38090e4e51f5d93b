// Command connload measures what one client address holding connections
// does to everyone else: an attacker address opens and holds connections to
// a waitroom server (kept-alive after one request, or silent), re-opening
// those the server closes, while an honest address sends requests at a
// steady rate on fresh connections; it reports the attacker's peak hold and
// the honest requests' statuses and latency percentiles as JSON.
//
// It only talks to loopback addresses, and it stops by itself after
// --duration (at most 5 minutes) with at most --hold connections (at most
// 30,000) and --rate new connections a second.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Hard ceilings, so that a typo cannot turn a measurement into a flood.
const (
	maxHold       = 30_000
	maxRate       = 5_000
	maxDuration   = 5 * time.Minute
	maxHonestRate = 1_000
)

type config struct {
	URL        string
	Path       string
	Attacker   string
	Honest     string
	Hold       int
	Mode       string
	Rate       int
	HonestRate int
	Duration   time.Duration
	Settle     time.Duration
	Timeout    time.Duration
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("connload", flag.ContinueOnError)
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "waitroom's base URL (loopback only)")
	fs.StringVar(&c.Path, "path", "/livez", "path the honest client and the kept-alive attacker request")
	fs.StringVar(&c.Attacker, "attacker", "127.0.0.5", "loopback address the attacker's connections come from")
	fs.StringVar(&c.Honest, "honest", "127.0.0.2", "loopback address the honest requests come from")
	fs.IntVar(&c.Hold, "hold", 1000, "connections the attacker tries to hold open (0: no attacker)")
	fs.StringVar(&c.Mode, "mode", "idle", "attacker's connections: idle (one request, then kept alive) or silent (nothing sent)")
	fs.IntVar(&c.Rate, "rate", 500, "new attacker connections a second at most (opening and re-opening)")
	fs.IntVar(&c.HonestRate, "honest-rate", 20, "honest requests a second, each on a new connection")
	fs.DurationVar(&c.Duration, "duration", 20*time.Second, "how long the honest client measures")
	fs.DurationVar(&c.Settle, "settle", 5*time.Second, "how long the attacker opens connections before the honest client starts")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "an honest request's time limit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.Scheme != "http" {
		return c, fmt.Errorf("--url %q: want http://loopback:port", c.URL)
	}
	for _, a := range []struct{ name, v string }{{"--url", u.Hostname()}, {"--attacker", c.Attacker}, {"--honest", c.Honest}} {
		if ip := net.ParseIP(a.v); ip == nil || !ip.IsLoopback() {
			return c, fmt.Errorf("%s %q: want a loopback address", a.name, a.v)
		}
	}
	switch {
	case c.Mode != "idle" && c.Mode != "silent":
		return c, fmt.Errorf("--mode %q: want idle or silent", c.Mode)
	case c.Hold < 0 || c.Hold > maxHold:
		return c, fmt.Errorf("--hold %d: want 0 to %d", c.Hold, maxHold)
	case c.Rate < 1 || c.Rate > maxRate:
		return c, fmt.Errorf("--rate %d: want 1 to %d", c.Rate, maxRate)
	case c.HonestRate < 1 || c.HonestRate > maxHonestRate:
		return c, fmt.Errorf("--honest-rate %d: want 1 to %d", c.HonestRate, maxHonestRate)
	case c.Duration <= 0 || c.Duration+c.Settle > maxDuration:
		return c, fmt.Errorf("--duration %v plus --settle %v: want at most %v", c.Duration, c.Settle, maxDuration)
	}
	return c, nil
}

func main() {
	cfg, err := parse(os.Args[1:])
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "connload:", err)
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := run(ctx, cfg)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}

// report is what one run saw.
type report struct {
	Attacker struct {
		Held     int64 `json:"held"`      // open at the end of the run
		HeldMax  int64 `json:"held_max"`  // most open at once
		Opened   int64 `json:"opened"`    // connections that got through the handshake
		Refused  int64 `json:"refused"`   // answered 503
		Closed   int64 `json:"closed"`    // closed by the server
		DialErrs int64 `json:"dial_errs"` // refused or failed before a connection
	} `json:"attacker"`
	Honest struct {
		Requests int64            `json:"requests"`
		OK       int64            `json:"ok"`
		Statuses map[string]int64 `json:"statuses"` // every answer but 2xx, and "transport" errors
		P50MS    float64          `json:"p50_ms"`
		P95MS    float64          `json:"p95_ms"`
		P99MS    float64          `json:"p99_ms"`
		MaxMS    float64          `json:"max_ms"`
	} `json:"honest"`
}

func run(ctx context.Context, cfg config) *report {
	rep := &report{}
	rep.Honest.Statuses = map[string]int64{}
	u, _ := url.Parse(cfg.URL)
	target := u.Host
	ctx, cancel := context.WithTimeout(ctx, cfg.Settle+cfg.Duration)
	defer cancel()

	a := &attacker{cfg: cfg, target: target, rep: rep, conns: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	if cfg.Hold > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); a.run(ctx) }()
	}
	select {
	case <-ctx.Done():
	case <-time.After(cfg.Settle):
	}
	lat := honest(ctx, cfg, target, rep)
	cancel()
	a.closeAll()
	wg.Wait()
	rep.Attacker.Held = a.held.Load()
	rep.Attacker.HeldMax = a.heldMax.Load()
	slices.Sort(lat)
	rep.Honest.P50MS, rep.Honest.P95MS = pct(lat, 50), pct(lat, 95)
	rep.Honest.P99MS, rep.Honest.MaxMS = pct(lat, 99), pct(lat, 100)
	return rep
}

func pct(s []time.Duration, p int) float64 {
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	i = min(max(i-1, 0), len(s)-1)
	return float64(s[i].Microseconds()) / 1000
}

// attacker holds up to cfg.Hold connections from cfg.Attacker, opening at
// most cfg.Rate a second.
type attacker struct {
	cfg     config
	target  string
	rep     *report
	held    atomic.Int64
	heldMax atomic.Int64

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func (a *attacker) run(ctx context.Context) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a.cfg.Attacker)}, Timeout: 5 * time.Second}
	tick := time.NewTicker(time.Second / time.Duration(a.cfg.Rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			a.wg.Wait()
			return
		case <-tick.C:
		}
		if a.held.Load() >= int64(a.cfg.Hold) {
			continue
		}
		a.held.Add(1) // counted while dialing, so the hold is never overshot
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer a.held.Add(-1)
			a.hold(ctx, &d)
		}()
	}
}

// hold opens one connection and keeps it until the server closes it.
func (a *attacker) hold(ctx context.Context, d *net.Dialer) {
	c, err := d.DialContext(ctx, "tcp", a.target)
	if err != nil {
		if ctx.Err() == nil {
			atomic.AddInt64(&a.rep.Attacker.DialErrs, 1)
		}
		return
	}
	if !a.track(c) {
		return
	}
	defer a.untrack(c)
	atomic.AddInt64(&a.rep.Attacker.Opened, 1)
	for n, m := a.held.Load(), a.heldMax.Load(); n > m && !a.heldMax.CompareAndSwap(m, n); m = a.heldMax.Load() {
	}
	br := bufio.NewReader(c)
	if a.cfg.Mode == "idle" {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET "+a.cfg.Path+" HTTP/1.1\r\nHost: waitroom\r\n\r\n"); err != nil {
			return
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode == http.StatusServiceUnavailable {
			atomic.AddInt64(&a.rep.Attacker.Refused, 1)
			return
		}
		_ = c.SetDeadline(time.Time{})
	}
	// Held until the server closes it (or the run ends).
	_, _ = io.Copy(io.Discard, br)
	if ctx.Err() == nil {
		atomic.AddInt64(&a.rep.Attacker.Closed, 1)
	}
}

func (a *attacker) track(c net.Conn) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		_ = c.Close()
		return false
	}
	a.conns[c] = struct{}{}
	return true
}

func (a *attacker) untrack(c net.Conn) {
	a.mu.Lock()
	delete(a.conns, c)
	a.mu.Unlock()
	_ = c.Close()
}

func (a *attacker) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	for c := range a.conns {
		_ = c.Close()
	}
}

// honest sends cfg.HonestRate requests a second from cfg.Honest, each on a
// new connection, until ctx ends; it returns the answered requests' latencies.
func honest(ctx context.Context, cfg config, target string, rep *report) []time.Duration {
	tr := &http.Transport{
		DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(cfg.Honest)}, Timeout: cfg.Timeout}).DialContext,
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: cfg.Timeout}
	var (
		mu  sync.Mutex
		lat []time.Duration
		wg  sync.WaitGroup
	)
	tick := time.NewTicker(time.Second / time.Duration(cfg.HonestRate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return lat
		case <-tick.C:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			res, err := client.Get("http://" + target + cfg.Path)
			d := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			rep.Honest.Requests++
			if err != nil {
				rep.Honest.Statuses["transport"]++
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			lat = append(lat, d)
			if res.StatusCode/100 == 2 {
				rep.Honest.OK++
			} else {
				rep.Honest.Statuses[strconv.Itoa(res.StatusCode)]++
			}
		}()
	}
}
