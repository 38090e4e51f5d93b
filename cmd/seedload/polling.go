package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/waitroom/waitroom/internal/vocab"
)

// The ways waiters learn of their place.
const (
	modeFlat5  = "flat5"  // poll every 5 s whatever the place (the seed's before)
	modeFlat1  = "flat1"  // poll every 1 s (what the issue names)
	modeTiered = "tiered" // poll after next_update_ms: the room's tiers, set as the seed's
	modePush   = "push"   // one WebSocket each, no polling
)

var allModes = []string{modeFlat5, modeFlat1, modeTiered, modePush}

type pollingConfig struct {
	common
	Modes     []string
	Window    time.Duration
	Settle    time.Duration
	Batch     int64
	Interval  time.Duration
	AccessLog string
	RedisAddr string
	ServerPID int
}

func parsePolling(args []string, stderr io.Writer) (pollingConfig, error) {
	var c pollingConfig
	var modes string
	fs := flag.NewFlagSet("seedload polling", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.register(fs, "seeds-poll", 5000)
	fs.StringVar(&modes, "modes", strings.Join(allModes, ","), "modes to run, in order: "+strings.Join(allModes, ", "))
	fs.DurationVar(&c.Window, "window", 30*time.Second, "length of each mode's measurement")
	fs.DurationVar(&c.Settle, "settle", 3*time.Second, "wait between the last enter and the window")
	fs.Int64Var(&c.Batch, "batch-size", 1, "the room's pace during the run: admitted per tick (slow, so places hold nearly steady but the line moves)")
	fs.DurationVar(&c.Interval, "batch-interval", time.Second, "the room's tick")
	fs.StringVar(&c.AccessLog, "access-log", "", "waitroom's log file (text format, --log-level info): requests are counted at the server from its access lines")
	fs.StringVar(&c.RedisAddr, "redis-addr", "", "waitroom's Redis (loopback host:port): its commands per second are read with INFO")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "waitroom's pid: its CPU is read from /proc")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := c.check(); err != nil {
		return c, err
	}
	var err error
	if c.Modes, err = parseModes(modes, allModes); err != nil {
		return c, err
	}
	switch {
	case c.Window <= 0 || c.Window > maxWindow:
		return c, fmt.Errorf("--window: want (0, %s]", maxWindow)
	case c.Settle < 0 || c.Settle > time.Minute:
		return c, errors.New("--settle: want 0..1m")
	case c.Batch < 1 || c.Batch > 10_000 || c.Interval < 50*time.Millisecond || c.Interval > time.Minute:
		return c, errors.New("--batch-size, --batch-interval: want 1..10000 every 50ms..1m")
	case c.AccessLog == "":
		return c, errors.New("--access-log: required: requests are counted at the server")
	}
	if c.RedisAddr != "" {
		if err := checkLoopbackAddr(c.RedisAddr); err != nil {
			return c, fmt.Errorf("--redis-addr: %w", err)
		}
	}
	return c, nil
}

// pollingRun is one mode's result; rates are per second of the window.
type pollingRun struct {
	Mode            string         `json:"mode"`
	WaitingStart    int64          `json:"waiting_at_window_start"`
	WaitingEnd      int64          `json:"waiting_at_window_end"`
	WindowS         float64        `json:"window_s"`
	ServerRequests  float64        `json:"server_requests_per_s"` // access lines of the room's API in the window
	ServerAccess    accessCounts   `json:"server_requests"`
	ServerSecondP50 int            `json:"server_requests_median_second"` // the window's seconds by requests finished
	ServerSecondMax int            `json:"server_requests_busiest_second"`
	NotNormal       []string       `json:"ready_not_normal,omitempty"` // /readyz samples (1 a second) not in normal mode: "+12s degraded"
	ClientRequests  float64        `json:"client_requests_per_s"`      // status requests the client sent
	ClientMessages  float64        `json:"client_ws_messages_per_s"`
	ServerMessages  float64        `json:"server_ws_messages_per_s"` // waitroom_push_messages_total
	RedisCommands   float64        `json:"redis_commands_per_s,omitempty"`
	ServerCPUCores  float64        `json:"server_cpu_cores,omitempty"`
	Latency         dist           `json:"status_latency"` // client: status requests in the window
	Errors          map[string]int `json:"errors"`
	ExpectedPerS    float64        `json:"expected_per_s"` // what the mode asks for at the window's places
}

type pollingReport struct {
	Visitors int          `json:"visitors"`
	Runs     []pollingRun `json:"runs"`
}

func runPolling(ctx context.Context, c pollingConfig, log io.Writer) (*pollingReport, error) {
	a := newAPI(c.URL, c.AdminToken, 1000)
	rep := &pollingReport{Visitors: c.Visitors}
	for _, mode := range c.Modes {
		fmt.Fprintf(log, "seedload: polling %s: %d waiters, window %s\n", mode, c.Visitors, c.Window)
		r, err := pollingOnce(ctx, c, a, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		rep.Runs = append(rep.Runs, *r)
	}
	return rep, nil
}

// waiters counts what the crowd does; only the window's samples count.
type waiters struct {
	inWindow  atomic.Bool
	waiting   atomic.Int64
	requests  atomic.Int64
	messages  atomic.Int64
	mu        sync.Mutex
	lat       []float64
	positions []int64 // each waiter's place at the window's start
	errs      counts
}

func pollingOnce(ctx context.Context, c pollingConfig, a *api, mode string) (*pollingRun, error) {
	id := c.Room + "-" + mode
	r := room{
		Capacity: 1_000_000, BatchSize: c.Batch, BatchInterval: c.Interval.Milliseconds(),
		Tiers: seedTiers(), Title: "seedload polling " + mode,
	}
	if err := a.putRoom(ctx, id, r); err != nil {
		return nil, err
	}
	// The room goes when the mode is done, its waiters with it.
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.deleteRoom(dctx, id)
	}()
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	w := &waiters{}
	ws := &http.Client{Transport: &http.Transport{
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly}).DialContext, DisableKeepAlives: true,
	}}
	var pmu sync.Mutex
	places := map[*atomic.Int64]struct{}{}
	visitor := func(m ticketMsg, cookie string) {
		defer wg.Done()
		pos := &atomic.Int64{}
		pos.Store(m.Position)
		pmu.Lock()
		places[pos] = struct{}{}
		pmu.Unlock()
		if m.State != vocab.StateWaiting {
			return
		}
		w.waiting.Add(1)
		defer w.waiting.Add(-1)
		switch mode {
		case modePush:
			w.push(wctx, a, ws, id, m.Ticket, cookie, pos)
		case modeFlat5:
			w.poll(wctx, a, id, m, cookie, 5*time.Second, pos)
		case modeFlat1:
			w.poll(wctx, a, id, m, cookie, time.Second, pos)
		case modeTiered:
			w.poll(wctx, a, id, m, cookie, 0, pos)
		}
	}
	wg.Add(c.Visitors)
	n, err := a.enterAll(ctx, id, c.Visitors, c.Enterers, c.RampLimit, &w.errs, visitor)
	wg.Add(n - c.Visitors) // the visitors that never entered
	if err != nil {
		return nil, err
	}
	sleepCtx(ctx, c.Settle)

	run := &pollingRun{Mode: mode}
	before, err := c.snapshot(ctx, a)
	if err != nil {
		return nil, err
	}
	run.WaitingStart = w.waiting.Load()
	pmu.Lock()
	for p := range places {
		if v := p.Load(); v > 0 {
			w.positions = append(w.positions, v)
		}
	}
	pmu.Unlock()
	w.inWindow.Store(true)
	start := time.Now()
	// Whether waitroom stays in normal mode: an overloaded Redis pool reads
	// as Redis gone and switches it to degraded mode.
	tick := time.NewTicker(time.Second)
	for time.Since(start) < c.Window && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case now := <-tick.C:
			if m := readyMode(ctx, a); m != "normal" {
				run.NotNormal = append(run.NotNormal, fmt.Sprintf("+%.0fs %s", now.Sub(start).Seconds(), m))
			}
		}
	}
	tick.Stop()
	w.inWindow.Store(false)
	secs := time.Since(start).Seconds()
	after, err := c.snapshot(ctx, a)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	run.WaitingEnd = w.waiting.Load()
	run.WindowS = secs
	acc, err := countAccess(c.AccessLog, before.logSize, after.logSize, "/api/rooms/"+id+"/")
	if err != nil {
		return nil, err
	}
	run.ServerAccess = acc
	run.ServerRequests = float64(acc.total()) / secs
	if n := len(acc.PerSecond); n > 0 {
		run.ServerSecondP50, run.ServerSecondMax = acc.PerSecond[n/2], acc.PerSecond[n-1]
	}
	run.ClientRequests = float64(w.requests.Load()) / secs
	run.ClientMessages = float64(w.messages.Load()) / secs
	run.ServerMessages = (after.pushMessages - before.pushMessages) / secs
	if c.RedisAddr != "" {
		run.RedisCommands = float64(after.redisCommands-before.redisCommands) / secs
	}
	if c.ServerPID > 0 {
		run.ServerCPUCores = (after.cpu - before.cpu) / secs
	}
	w.mu.Lock()
	run.Latency = summarize(w.lat)
	run.ExpectedPerS = expectedRate(mode, w.positions)
	w.mu.Unlock()
	run.Errors = w.errs.snapshot()
	return run, nil
}

// expectedRate is the requests (or, for push, at most the messages) per
// second the mode asks of the server at these places: the seed's arithmetic.
func expectedRate(mode string, positions []int64) float64 {
	sum := 0.0
	for _, p := range positions {
		switch mode {
		case modeFlat5:
			sum += 1.0 / 5
		case modeFlat1:
			sum += 1
		case modeTiered, modePush:
			sum += 1000.0 / float64(tierInterval(p))
		}
	}
	return sum
}

// tierInterval is the seed's tier for a place, in ms.
func tierInterval(pos int64) int64 {
	for _, t := range seedTiers() {
		if t.MaxPosition == nil || pos <= *t.MaxPosition {
			return t.IntervalMS
		}
	}
	return 0
}

// poll asks for the ticket every flat interval or, with flat 0, after each
// answer's next_update_ms, starting at a random point of the first
// interval (the crowd did not all enter at the same instant). It stops
// when the ticket is no longer waiting.
func (w *waiters) poll(ctx context.Context, a *api, room string, m ticketMsg, cookie string, flat time.Duration, pos *atomic.Int64) {
	every := func(m ticketMsg) time.Duration {
		if flat > 0 {
			return flat
		}
		return time.Duration(max(m.NextUpdateMS, 100)) * time.Millisecond
	}
	next := time.Now().Add(time.Duration(rand.Int64N(int64(every(m)))))
	u := a.base + "/api/rooms/" + url.PathEscape(room) + "/tickets/" + url.PathEscape(m.Ticket)
	for {
		sleepCtx(ctx, time.Until(next))
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		got, err := w.status(ctx, a, u, cookie)
		if ctx.Err() != nil {
			return
		}
		if w.inWindow.Load() {
			w.requests.Add(1)
			if err == nil {
				w.mu.Lock()
				w.lat = append(w.lat, msOf(time.Since(start)))
				w.mu.Unlock()
			}
		}
		if err != nil {
			w.errs.add("status: " + err.Error())
			next = time.Now().Add(time.Second)
			continue
		}
		pos.Store(got.Position)
		if got.State != vocab.StateWaiting {
			w.errs.add("ended: " + string(got.State))
			return
		}
		// The next poll is one interval after this one began; a late
		// answer does not make up for lost polls with a burst.
		next = start.Add(every(got))
	}
}

func (w *waiters) status(ctx context.Context, a *api, u, cookie string) (ticketMsg, error) {
	var m ticketMsg
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return m, err
	}
	req.Header.Set("Cookie", cookie)
	resp, err := a.http.Do(req)
	if err != nil {
		return m, errors.New("transport")
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return m, errors.New("transport")
	}
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, errors.New("bad ticket JSON")
	}
	return m, nil
}

// push holds the ticket's WebSocket and counts its messages until the
// ticket is no longer waiting.
func (w *waiters) push(ctx context.Context, a *api, ws *http.Client, room, ticket, cookie string, pos *atomic.Int64) {
	u := "ws" + strings.TrimPrefix(a.base, "http") + "/api/rooms/" + url.PathEscape(room) + "/tickets/" + url.PathEscape(ticket) + "/ws"
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: ws, HTTPHeader: http.Header{"Cookie": {cookie}}})
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			w.errs.add("ws dial")
		}
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 10)
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.errs.add("ws read")
			}
			return
		}
		if w.inWindow.Load() {
			w.messages.Add(1)
		}
		var m ticketMsg
		if json.Unmarshal(data, &m) != nil {
			w.errs.add("ws: bad ticket JSON")
			continue
		}
		pos.Store(m.Position)
		if m.State != vocab.StateWaiting {
			w.errs.add("ended: " + string(m.State))
			return
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// seedPolling is the seed's table at 5,000 waiters (requests per second, by
// its arithmetic); it had no flat 1 s nor push row.
var seedPolling = map[string]string{modeFlat5: "1000", modeFlat1: "-", modeTiered: "580", modePush: "-"}

func printPolling(w io.Writer, c pollingConfig, r *pollingReport) {
	fmt.Fprintf(w, "Requests per second on waitroom: %d waiters, %s window each, the line moving %d every %s\n",
		r.Visitors, c.Window, c.Batch, c.Interval)
	fmt.Fprintf(w, "%-7s %7s %8s %9s %11s %9s %8s %9s %7s %7s | %-8s\n", "mode", "waiting", "expected", "server rq", "med/max 1s", "client rq", "ws msg", "redis cmd", "srv cpu", "p95 ms", "seed rq/s")
	for _, run := range r.Runs {
		fmt.Fprintf(w, "%-7s %7d %8.0f %9.0f %11s %9.0f %8.0f %9.0f %7.2f %7.1f | %8s\n", run.Mode, run.WaitingStart,
			run.ExpectedPerS, run.ServerRequests, fmt.Sprintf("%d/%d", run.ServerSecondP50, run.ServerSecondMax), run.ClientRequests,
			run.ServerMessages, run.RedisCommands, run.ServerCPUCores, run.Latency.P95, seedPolling[run.Mode])
	}
	fmt.Fprintln(w, "  per second of the window. server rq: waitroom's access-log lines for the room's API (med/max 1s: its median and busiest")
	fmt.Fprintln(w, "  second); ws msg: waitroom_push_messages_total; expected: the seed's arithmetic at the window's places (push: the most")
	fmt.Fprintln(w, "  its tiers allow); redis cmd: total_commands_processed; srv cpu: waitroom's cores; p95: the client's status requests")
	for _, run := range r.Runs {
		var notes []string
		if len(run.NotNormal) > 0 {
			notes = append(notes, fmt.Sprintf("not in normal mode at %d of the window's /readyz samples, first %s", len(run.NotNormal), run.NotNormal[0]))
		}
		if bad := run.ServerAccess.total() - run.ServerAccess.ByStatus["200"] - run.ServerAccess.ByStatus["101"]; bad > 0 {
			notes = append(notes, fmt.Sprintf("server answered %v", run.ServerAccess.ByStatus))
		}
		// Admitted waiters leaving is the line moving, not a fault.
		if errs := maps.Clone(run.Errors); len(errs) > 0 {
			delete(errs, "ended: admitted")
			if len(errs) > 0 {
				notes = append(notes, fmt.Sprintf("client: %v", errs))
			}
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", run.Mode, strings.Join(notes, "; "))
		}
	}
}

// parseModes reads --modes, a comma-separated list of allowed's names.
func parseModes(list string, allowed []string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(list, ",") {
		if !slices.Contains(allowed, m) {
			return nil, fmt.Errorf("--modes: unknown mode %q", m)
		}
		out = append(out, m)
	}
	return out, nil
}
