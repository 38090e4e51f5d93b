package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/waitroom/waitroom/internal/vocab"
)

// pace is one run's admission setting.
type pace struct {
	Name     string        `json:"name"`
	Batch    int64         `json:"batch_size"`
	Interval time.Duration `json:"-"`
	Jitter   time.Duration `json:"-"`
}

func (p pace) String() string {
	return fmt.Sprintf("%d every %d ms, jitter %d ms", p.Batch, p.Interval.Milliseconds(), p.Jitter.Milliseconds())
}

type herdConfig struct {
	common
	CheckoutAddr string
	Path         string
	Workers      int
	Queue        int
	Service      time.Duration
	Runs         []pace
	RunTimeout   time.Duration
}

func parseHerd(args []string, stderr io.Writer) (herdConfig, error) {
	var c herdConfig
	a := pace{Name: "A"}
	b := pace{Name: "B"}
	fs := flag.NewFlagSet("seedload herd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.register(fs, "seeds", 1500)
	fs.StringVar(&c.CheckoutAddr, "checkout-addr", "127.0.0.1:9000", "where to serve the test checkout (waitroom's --upstream); loopback")
	fs.StringVar(&c.Path, "path", "/checkout/order", "the order's path at waitroom, under --protect")
	fs.IntVar(&c.Workers, "workers", 8, "the checkout's workers (orders served at once)")
	fs.IntVar(&c.Queue, "queue", 10_000, "orders that may wait for a worker; beyond, 503")
	fs.DurationVar(&c.Service, "service", 20*time.Millisecond, "one order's service time")
	fs.Int64Var(&a.Batch, "a-batch", 50, "run A: admitted per tick")
	fs.DurationVar(&a.Interval, "a-interval", time.Second, "run A: tick")
	fs.DurationVar(&a.Jitter, "a-jitter", 0, "run A: jitter (orderable_at spread)")
	fs.Int64Var(&b.Batch, "b-batch", 10, "run B: admitted per tick")
	fs.DurationVar(&b.Interval, "b-interval", 200*time.Millisecond, "run B: tick")
	fs.DurationVar(&b.Jitter, "b-jitter", 200*time.Millisecond, "run B: jitter (orderable_at spread)")
	fs.DurationVar(&c.RunTimeout, "run-timeout", 3*time.Minute, "most time for one run, entering included")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := c.check(); err != nil {
		return c, err
	}
	if err := checkLoopbackAddr(c.CheckoutAddr); err != nil {
		return c, fmt.Errorf("--checkout-addr: %w", err)
	}
	switch {
	case !strings.HasPrefix(c.Path, "/"):
		return c, errors.New("--path: want an absolute path")
	case c.Workers < 1 || c.Workers > 1000:
		return c, errors.New("--workers: want 1..1000")
	case c.Queue < 0 || c.Queue > maxVisitors:
		return c, fmt.Errorf("--queue: want 0..%d", maxVisitors)
	case c.Service < 0 || c.Service > 10*time.Second:
		return c, errors.New("--service: want 0..10s")
	case c.RunTimeout <= 0 || c.RunTimeout > maxWindow:
		return c, fmt.Errorf("--run-timeout: want (0, %s]", maxWindow)
	}
	for _, p := range []pace{a, b} {
		// The room's own bounds (queue.Settings): refused here, before a run.
		if p.Batch < 1 || p.Batch > 10_000 || p.Interval < 50*time.Millisecond || p.Interval > time.Minute || p.Jitter < 0 || p.Jitter > 10*time.Minute {
			return c, fmt.Errorf("run %s: %s: want batch 1..10000, tick 50ms..1m, jitter 0..10m", p.Name, p)
		}
	}
	c.Runs = []pace{a, b}
	return c, nil
}

// herdRun is one run's result.
type herdRun struct {
	Pace       string         `json:"pace"`
	RatePerS   float64        `json:"rate_per_s"`
	Visitors   int            `json:"visitors"`
	Orders     dist           `json:"orders"`                // client: the order's response time through the gate
	Checkout   checkoutStats  `json:"checkout"`              // the checkout's own view
	HeardLate  dist           `json:"heard_after_orderable"` // admission heard - orderable_at (clipped at 0)
	AdmitSpanS float64        `json:"admit_span_s"`          // first to last order sent
	Statuses   map[string]int `json:"statuses"`              // the orders' final HTTP statuses
	TooEarly   int            `json:"too_early"`             // 425s retried
	Errors     map[string]int `json:"errors"`
}

type herdReport struct {
	Workers   int       `json:"workers"`
	ServiceMS float64   `json:"service_ms"`
	Runs      []herdRun `json:"runs"`
}

func runHerd(ctx context.Context, c herdConfig, log io.Writer) (*herdReport, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	co := newCheckout(ctx, c.Workers, c.Queue, c.Service)
	stop, err := serveCheckout(ctx, c.CheckoutAddr, co)
	if err != nil {
		return nil, fmt.Errorf("checkout: %w", err)
	}
	defer stop()
	a := newAPI(c.URL, c.AdminToken, 256)
	rep := &herdReport{Workers: c.Workers, ServiceMS: msOf(c.Service)}
	for _, p := range c.Runs {
		fmt.Fprintf(log, "seedload: herd run %s: %d visitors, %s\n", p.Name, c.Visitors, p)
		r, err := herdOnce(ctx, c, a, co, p)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", p.Name, err)
		}
		rep.Runs = append(rep.Runs, *r)
	}
	return rep, nil
}

// herdOnce: the room paused, every visitor enters and waits on a WebSocket;
// then the line moves at pace p and each visitor, once admitted, places one
// order at its orderable_at through the gate.
func herdOnce(ctx context.Context, c herdConfig, a *api, co *checkout, p pace) (*herdRun, error) {
	ctx, cancel := context.WithTimeout(ctx, c.RunTimeout)
	defer cancel()
	r := room{
		Capacity: 1_000_000, BatchSize: p.Batch, BatchInterval: p.Interval.Milliseconds(),
		Jitter: p.Jitter.Milliseconds(), Paused: true, Title: "seedload herd " + p.Name,
	}
	if err := a.putRoom(ctx, c.Room, r); err != nil {
		return nil, err
	}
	co.take()
	ws := &http.Client{Transport: &http.Transport{
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly}).DialContext, DisableKeepAlives: true,
	}}
	var (
		errs      counts
		statuses  counts
		mu        sync.Mutex
		orders    []float64
		heardLate []float64
		first     time.Time
		last      time.Time
		tooEarly  atomic.Int64
		settled   atomic.Int64 // visitors waiting on a socket, or whose socket failed
		done      sync.WaitGroup
	)
	visitor := func(m ticketMsg, cookie string) {
		defer done.Done()
		tok, at, err := waitAdmitted(ctx, a, ws, c.Room, m.Ticket, cookie, &settled)
		if err != nil {
			errs.add(err.Error())
			return
		}
		heard := time.Now()
		if wait := time.Until(at); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		sent := time.Now()
		status, d, early := order(ctx, a, c.Path, tok, cookie)
		tooEarly.Add(int64(early))
		statuses.add(fmt.Sprint(status))
		mu.Lock()
		defer mu.Unlock()
		heardLate = append(heardLate, max(0, msOf(heard.Sub(at))))
		if first.IsZero() || sent.Before(first) {
			first = sent
		}
		if sent.After(last) {
			last = sent
		}
		if status == http.StatusOK {
			orders = append(orders, msOf(d))
		}
	}
	done.Add(c.Visitors)
	n, err := a.enterAll(ctx, c.Room, c.Visitors, c.Enterers, c.RampLimit, &errs, visitor)
	done.Add(n - c.Visitors) // the visitors that never entered
	if err != nil {
		return nil, err
	}
	// Everyone waits on an open socket (or has given up dialing) before the
	// line moves.
	for settled.Load() < int64(n) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	r.Paused = false
	if err := a.putRoom(ctx, c.Room, r); err != nil {
		return nil, err
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		return nil, fmt.Errorf("not every visitor ordered within --run-timeout %s", c.RunTimeout)
	}
	mu.Lock()
	defer mu.Unlock()
	return &herdRun{
		Pace: p.String(), RatePerS: float64(p.Batch) / p.Interval.Seconds(), Visitors: n,
		Orders: summarize(orders), Checkout: co.take(), HeardLate: summarize(heardLate),
		AdmitSpanS: last.Sub(first).Seconds(), Statuses: statuses.snapshot(),
		TooEarly: int(tooEarly.Load()), Errors: errs.snapshot(),
	}, nil
}

// waitAdmitted holds the ticket's WebSocket until it is admitted: its token
// and orderable_at. settled counts the visitor once its socket is open or
// dialing it failed for good.
func waitAdmitted(ctx context.Context, a *api, ws *http.Client, room, ticket, cookie string, settled *atomic.Int64) (string, time.Time, error) {
	u := "ws" + strings.TrimPrefix(a.base, "http") + "/api/rooms/" + url.PathEscape(room) + "/tickets/" + url.PathEscape(ticket) + "/ws"
	var conn *websocket.Conn
	for try := 0; ; try++ {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		var err error
		conn, _, err = websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: ws, HTTPHeader: http.Header{"Cookie": {cookie}}})
		cancel()
		if err == nil {
			break
		}
		if try == 4 || ctx.Err() != nil {
			settled.Add(1)
			return "", time.Time{}, errors.New("ws dial")
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 10)
	settled.Add(1)
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return "", time.Time{}, errors.New("ws read")
		}
		var m ticketMsg
		if err := json.Unmarshal(data, &m); err != nil {
			return "", time.Time{}, errors.New("ws: bad ticket JSON")
		}
		switch m.State {
		case vocab.StateWaiting:
			continue
		case vocab.StateAdmitted:
			at, err := time.Parse(time.RFC3339Nano, m.OrderableAt)
			if err != nil || m.Token == "" {
				return "", time.Time{}, errors.New("ws: admitted without token or orderable_at")
			}
			_ = conn.Close(websocket.StatusNormalClosure, "")
			return m.Token, at, nil
		default:
			return "", time.Time{}, errors.New("ws: state " + string(m.State))
		}
	}
}

// order places one order through the gate with the entry token and the
// visitor's cookie (the gate passes a token only with the cookie it was
// issued to). A 425 (a little early, clocks) is asked again shortly. It
// returns the final status (0: no answer), the final attempt's time and the
// 425s.
func order(ctx context.Context, a *api, path, token, cookie string) (int, time.Duration, int) {
	early := 0
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, strings.NewReader(`{"quantity":1}`))
		if err != nil {
			return 0, 0, early
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Cookie", cookie)
		start := time.Now()
		resp, err := a.http.Do(req)
		if err != nil {
			return 0, 0, early
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusTooEarly || early >= 20 {
			return resp.StatusCode, d, early
		}
		early++
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return 0, 0, early
		}
	}
}

// seedHerd is the seed's table: the order API behind its queue, 500 users x
// 10,000 requests (its p95 and max, ms), by run.
var seedHerd = map[string][2]float64{"A": {129, 6184}, "B": {79, 6840}}

func printHerd(w io.Writer, c herdConfig, r *herdReport) {
	fmt.Fprintf(w, "Checkout response time behind the gate: %d visitors per run, checkout = %d workers x %s per order, the rest queued\n",
		c.Visitors, r.Workers, c.Service)
	fmt.Fprintf(w, "%-3s %-30s %8s %8s %8s %8s %6s %6s %6s | %-14s\n", "run", "pace", "p50 ms", "p95 ms", "p99 ms", "max ms", "orders", "peak", "errors", "seed p95 / max")
	for i, run := range r.Runs {
		errs := 0
		for _, v := range run.Errors {
			errs += v
		}
		for k, v := range run.Statuses {
			if k != "200" {
				errs += v
			}
		}
		name := c.Runs[i].Name
		seed := seedHerd[name]
		fmt.Fprintf(w, "%-3s %-30s %8.1f %8.1f %8.1f %8.1f %6d %6d %6d | %5.0f / %5.0f\n", name, run.Pace, run.Orders.P50, run.Orders.P95, run.Orders.P99, run.Orders.Max, run.Orders.N, run.Checkout.PeakInFlight, errs, seed[0], seed[1])
	}
	fmt.Fprintln(w, "  times: the visitor's, through waitroom's gate; peak: orders in the checkout at once (queued or served). At the checkout itself:")
	for i, run := range r.Runs {
		fmt.Fprintf(w, "  %-3s p50 %.1f, p95 %.1f, p99 %.1f, max %.1f ms; admission heard p99 %.1f ms after orderable_at; orders sent over %.1f s; 425s retried %d\n",
			c.Runs[i].Name, run.Checkout.Latency.P50, run.Checkout.Latency.P95, run.Checkout.Latency.P99, run.Checkout.Latency.Max, run.HeardLate.P99, run.AdmitSpanS, run.TooEarly)
	}
}
