// Command wsload holds many WebSocket waiters open against one waitroom
// server on this machine and measures what the push path promises: every
// waiter hears of its moving position no later than its tier interval, an
// admitted waiter hears of it at once, and the server and Redis stay cheap
// per connection.
//
// Each visitor enters the room (POST …/enter, which sets its wr_vid cookie)
// and opens …/tickets/{ticket}/ws with that cookie. Every message's receive
// time, state, position and next_update_ms are recorded. A waiter that is
// admitted closes (a browser would navigate away) and, with --replenish, a
// new visitor takes its place so --conns stay open.
//
// It only talks to loopback addresses. Every phase is bounded: the ramp by
// --ramp-timeout, the measurement by --duration, the visitors by
// --max-visitors, the whole run by the sum plus a grace.
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
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// Hard ceilings, so that a typo cannot turn a benchmark into a flood.
const (
	maxConns       = 60_000
	maxConcurrency = 2000
	maxDuration    = 15 * time.Minute
)

type config struct {
	URL         string
	Room        string
	AdminToken  string
	Conns       int
	Concurrency int
	Duration    time.Duration
	RampTimeout time.Duration
	Settle      time.Duration
	MaxVisitors int
	Replenish   bool
	Sources     int
	StartPaused bool
	Capacity    int64
	BatchSize   int64
	BatchEvery  time.Duration
	ServerPID   int
	RedisAddr   string
	LateLimit   time.Duration
	AdmitLimit  time.Duration
	RSSLimit    int64
	Trace       string
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("wsload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "waitroom base URL; must be a loopback address")
	fs.StringVar(&c.Room, "room", "wsbench", "room to load")
	fs.StringVar(&c.AdminToken, "admin-token", "", "when set, create or replace the room first (jitter 0, the pace below)")
	fs.IntVar(&c.Conns, "conns", 1000, "WebSocket waiters to hold open")
	fs.IntVar(&c.Concurrency, "concurrency", 100, "visitors entering and dialing at once")
	fs.DurationVar(&c.Duration, "duration", 60*time.Second, "length of the measurement window")
	fs.DurationVar(&c.RampTimeout, "ramp-timeout", 3*time.Minute, "most time to open --conns; the window starts with what is open then")
	fs.DurationVar(&c.Settle, "settle", 5*time.Second, "wait between the ramp and the window")
	fs.IntVar(&c.MaxVisitors, "max-visitors", 0, "most visitors entered in the whole run (default 3 x --conns)")
	fs.BoolVar(&c.Replenish, "replenish", true, "a new visitor takes the place of each admitted (or dropped) one, so --conns stay open")
	fs.IntVar(&c.Sources, "sources", 1, "spread connections over source addresses 127.0.0.1 .. 127.0.0.N (more ephemeral ports)")
	fs.BoolVar(&c.StartPaused, "start-paused", false, "keep the room paused until the window starts, then unpause it (every waiter is pushed at once); default: the line moves from the start")
	fs.Int64Var(&c.Capacity, "capacity", 1_000_000, "room capacity (admitted sessions at once)")
	fs.Int64Var(&c.BatchSize, "batch-size", 10, "admitted per batch")
	fs.DurationVar(&c.BatchEvery, "batch-interval", 200*time.Millisecond, "time between batches")
	fs.IntVar(&c.ServerPID, "server-pid", 0, "waitroom's pid: its RSS and CPU are read from /proc")
	fs.StringVar(&c.RedisAddr, "redis-addr", "", "the server's Redis (host:port, loopback): its command counts are read with INFO")
	fs.DurationVar(&c.LateLimit, "late-limit", 500*time.Millisecond, "target: p99 of update lateness beyond the tier interval")
	fs.DurationVar(&c.AdmitLimit, "admit-limit", 250*time.Millisecond, "target: p99 of admission latency")
	fs.Int64Var(&c.RSSLimit, "rss-limit", 1<<30, "target: server resident memory at peak, bytes")
	fs.StringVar(&c.Trace, "trace", "", "write every message's receive time, visitor, state, position and next_update_ms to this file (CSV)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.MaxVisitors == 0 {
		c.MaxVisitors = 3 * c.Conns
	}
	switch {
	case c.Conns < 1 || c.Conns > maxConns:
		return c, fmt.Errorf("--conns: want 1..%d", maxConns)
	case c.Concurrency < 1 || c.Concurrency > maxConcurrency:
		return c, fmt.Errorf("--concurrency: want 1..%d", maxConcurrency)
	case c.Duration <= 0 || c.Duration > maxDuration:
		return c, fmt.Errorf("--duration: want (0, %s]", maxDuration)
	case c.RampTimeout <= 0 || c.RampTimeout > maxDuration:
		return c, fmt.Errorf("--ramp-timeout: want (0, %s]", maxDuration)
	case c.Settle < 0 || c.Settle > maxDuration:
		return c, fmt.Errorf("--settle: want [0, %s]", maxDuration)
	case c.MaxVisitors < c.Conns || c.MaxVisitors > 10*maxConns:
		return c, fmt.Errorf("--max-visitors: want --conns..%d", 10*maxConns)
	case c.Sources < 1 || c.Sources > 250:
		return c, errors.New("--sources: want 1..250")
	}
	if _, err := checkLoopbackURL(c.URL); err != nil {
		return c, err
	}
	c.URL = strings.TrimRight(c.URL, "/")
	if c.RedisAddr != "" {
		host, _, err := net.SplitHostPort(c.RedisAddr)
		if err != nil {
			return c, fmt.Errorf("--redis-addr: %w", err)
		}
		if err := checkLoopbackHost(host); err != nil {
			return c, fmt.Errorf("--redis-addr: %w", err)
		}
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := parseConfig(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsload:", err)
		os.Exit(2)
	}
	rep, err := run(ctx, c, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsload:", err)
		os.Exit(1)
	}
	printSummary(os.Stdout, c, rep)
	line, _ := json.Marshal(rep)
	fmt.Println(string(line))
}

// loader holds the run's shared state.
type loader struct {
	c        config
	log      io.Writer
	enter    *http.Client
	ws       *http.Client
	tr       *tracker
	phase    atomic.Int32
	visitors atomic.Int64 // visitors started (bounded by MaxVisitors)
	open     atomic.Int64 // WebSockets open
	waiting  atomic.Int64 // open and last heard waiting
	errMu    sync.Mutex
	errs     map[string]int // by kind and phase
	wmu      sync.Mutex
	waiters  map[*waiter]struct{}
	closes   map[string]int // server-side closes of waiting connections, by status
	traceMu  sync.Mutex
	trace    io.Writer // nil unless --trace
	start    time.Time
	nextID   atomic.Int64
}

func (l *loader) ph() phase { return phase(l.phase.Load()) }

func (l *loader) fail(kind string) {
	l.errMu.Lock()
	l.errs[l.ph().String()+"/"+kind]++
	l.errMu.Unlock()
}

func newLoader(c config, log io.Writer) *loader {
	var next atomic.Uint32
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly, KeepAlive: -1}
		if c.Sources > 1 {
			i := next.Add(1) % uint32(c.Sources)
			d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i))}
		}
		return d.DialContext(ctx, network, addr)
	}
	return &loader{
		c: c, log: log, tr: newTracker(),
		enter: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
			DialContext: dial, MaxIdleConns: c.Concurrency, MaxIdleConnsPerHost: c.Concurrency,
			IdleConnTimeout: 30 * time.Second, DisableCompression: true,
		}},
		// Handshakes only: each connection is hijacked into its WebSocket.
		ws:      &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true, DisableCompression: true}},
		errs:    map[string]int{},
		waiters: map[*waiter]struct{}{},
		closes:  map[string]int{},
	}
}

// report is the run's result, printed as a summary and one JSON line.
type report struct {
	Conns        int     `json:"conns_target"`
	RampS        float64 `json:"ramp_s"`
	OpenAtWindow int64   `json:"open_at_window_start"`
	WindowS      float64 `json:"window_s"`
	OpenMin      int64   `json:"open_min"`
	OpenMax      int64   `json:"open_max"`
	WaitingMean  float64 `json:"waiting_mean"`
	WaitingMin   int64   `json:"waiting_min"`
	Visitors     int64   `json:"visitors_started"`

	Lateness       dist            `json:"lateness"`           // window: update gap beyond the promised tier interval
	LatenessByTier map[string]dist `json:"lateness_by_tier"`   // window, by promised interval (ms)
	LatenessHist   []int           `json:"lateness_hist_50ms"` // window: counts in 50 ms buckets, the last one open-ended
	LatenessRamp   dist            `json:"lateness_ramp"`      // the same during ramp and settle
	Overdue        dist            `json:"overdue_at_end"`     // waiters still waiting past their promise at the window's end
	Early          int             `json:"early_updates"`      // window: updates sooner than promised
	Admission      dist            `json:"admission"`          // window: receive - orderable_at
	AdmissionRamp  dist            `json:"admission_ramp"`
	SlowAdmitsAt   []float64       `json:"slow_admissions_at_s"` // window: seconds into it of each admission over the limit (first 200)
	Finals         map[string]int  `json:"finals"`               // window: final states seen
	Messages       int             `json:"messages"`
	BadMessages    int             `json:"bad_messages"`
	Errors         map[string]int  `json:"errors"`
	ServerCloses   map[string]int  `json:"server_closes"` // waiting connections the server closed, by status

	Server *serverReport   `json:"server,omitempty"`
	Redis  *redisReport    `json:"redis,omitempty"`
	Client clientReport    `json:"client"`
	Pass   map[string]bool `json:"pass"`
}

type serverReport struct {
	RSSBefore    int64   `json:"rss_before"`
	RSSAtWindow  int64   `json:"rss_at_window_start"`
	RSSPeak      int64   `json:"rss_peak"`
	HWM          int64   `json:"vm_hwm"`
	BytesPerConn int64   `json:"bytes_per_conn"` // (peak - before) / open at peak
	Threads      int64   `json:"threads"`
	FDs          int     `json:"fds_peak"`
	CPUCores     float64 `json:"cpu_cores_window"` // CPU seconds per second in the window
	// The Go runtime's own count (from /metrics), before any socket and
	// with all open at the window's start: heap and stacks in use per open
	// connection, without the GC's headroom that RSS carries.
	GoBefore         *goMem `json:"go_before,omitempty"`
	GoAtWindow       *goMem `json:"go_at_window_start,omitempty"`
	GoBytesPerConn   int64  `json:"go_bytes_per_conn,omitempty"`   // (heap + stacks at window - before) / open at window
	HeapBytesPerConn int64  `json:"heap_bytes_per_conn,omitempty"` // heap alone
}

type redisReport struct {
	Commands           int64            `json:"commands"`                  // total_commands_processed in the window, commands inside scripts included
	PerWaiterPerSecond float64          `json:"commands_per_waiter_per_s"` // over mean waiting connections
	Scripts            int64            `json:"script_calls"`              // EVALSHA + EVAL: round trips a client made
	ScriptsPerWaiterS  float64          `json:"script_calls_per_waiter_per_s"`
	Enters             int64            `json:"enters"`       // INCR: one per enter
	StatusReads        int64            `json:"status_reads"` // ZRANK: one per status read of a waiting ticket (push fetches and handshakes)
	StatusPerWaiterS   float64          `json:"status_reads_per_waiter_per_s"`
	ByCommand          map[string]int64 `json:"by_command"`
	CPUCores           float64          `json:"cpu_cores_window"`
	UsedMemory         int64            `json:"used_memory"`
}

type clientReport struct {
	RSSPeak    int64   `json:"rss_peak"`
	CPUCores   float64 `json:"cpu_cores_window"`
	Goroutines int     `json:"goroutines_peak"`
}

func run(ctx context.Context, c config, log io.Writer) (*report, error) {
	// The whole run stops by itself even if a phase misbehaves.
	ctx, cancel := context.WithTimeout(ctx, c.RampTimeout+c.Settle+c.Duration+30*time.Second)
	defer cancel()
	l := newLoader(c, log)
	l.start = time.Now()
	if c.Trace != "" {
		f, err := os.Create(c.Trace)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		fmt.Fprintln(bw, "t_ms,visitor,phase,state,position,next_update_ms")
		l.trace = bw
	}
	rep := &report{Conns: c.Conns, Errors: l.errs, ServerCloses: l.closes, Pass: map[string]bool{}}

	var before procStat
	if c.ServerPID > 0 {
		var err error
		if before, err = readProc(c.ServerPID); err != nil {
			return nil, fmt.Errorf("--server-pid: %w", err)
		}
	}
	goBefore, goErr := fetchGoMem(ctx, c.URL)
	if goErr != nil {
		fmt.Fprintln(log, goErr)
	}
	if c.AdminToken != "" {
		if err := l.putRoom(ctx, c.StartPaused); err != nil {
			return nil, err
		}
	}
	if !c.StartPaused {
		l.tr.setMovingSince(time.Now())
	}

	// Ramp: open --conns; replenishing visitors keep the count after.
	start := time.Now()
	fmt.Fprintf(log, "wsload: opening %d WebSockets to %s (room %q, %d at a time)\n", c.Conns, c.URL, c.Room, c.Concurrency)
	vctx, stopVisitors := context.WithCancel(ctx)
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.Concurrency)
	for range c.Conns {
		wg.Go(func() { l.visitor(vctx, sem) })
	}
	samp := newSampler(l, c.ServerPID)
	sctx, stopSampler := context.WithCancel(ctx)
	sampDone := make(chan struct{})
	go func() { defer close(sampDone); samp.loop(sctx) }()

	rampDeadline := time.NewTimer(c.RampTimeout)
	progress := time.NewTicker(2 * time.Second)
ramp:
	for l.open.Load() < int64(c.Conns) {
		select {
		case <-ctx.Done():
			break ramp
		case <-rampDeadline.C:
			fmt.Fprintf(log, "wsload: ramp timed out with %d of %d open\n", l.open.Load(), c.Conns)
			break ramp
		case <-progress.C:
			fmt.Fprintf(log, "wsload: %d open after %.0fs\n", l.open.Load(), time.Since(start).Seconds())
		case <-time.After(50 * time.Millisecond):
		}
	}
	progress.Stop()
	rep.RampS = time.Since(start).Seconds()
	fmt.Fprintf(log, "wsload: %d open after %.1fs; settling %s\n", l.open.Load(), rep.RampS, c.Settle)
	l.phase.Store(int32(phaseSettle))
	select {
	case <-ctx.Done():
	case <-time.After(c.Settle):
	}

	// Window.
	var srv0 procStat
	var rd0 redisInfo
	if c.ServerPID > 0 {
		srv0, _ = readProc(c.ServerPID)
	}
	goWin, goWinErr := fetchGoMem(ctx, c.URL)
	if goWinErr != nil {
		fmt.Fprintln(log, goWinErr)
	}
	if c.RedisAddr != "" {
		var err error
		if rd0, err = fetchRedisInfo(c.RedisAddr); err != nil {
			fmt.Fprintln(log, "wsload:", err)
		}
	}
	cli0, _ := readProc(os.Getpid())
	rep.OpenAtWindow = l.open.Load()
	samp.startWindow()
	w0 := time.Now()
	l.tr.mu.Lock()
	l.tr.windowStart, l.tr.admitLimit = w0, c.AdmitLimit
	l.tr.mu.Unlock()
	l.phase.Store(int32(phaseWindow))
	if c.StartPaused && c.AdminToken != "" {
		if err := l.putRoom(ctx, false); err != nil {
			fmt.Fprintln(log, "wsload:", err)
		}
		l.tr.setMovingSince(time.Now())
	}
	fmt.Fprintf(log, "wsload: measuring for %s with %d open\n", c.Duration, rep.OpenAtWindow)
	select {
	case <-ctx.Done():
	case <-time.After(c.Duration):
	}
	w1 := time.Now()
	l.phase.Store(int32(phaseDone))
	rep.WindowS = w1.Sub(w0).Seconds()

	// Read the end state before anything closes.
	var srv1 procStat
	var rd1 redisInfo
	if c.ServerPID > 0 {
		srv1, _ = readProc(c.ServerPID)
	}
	if c.RedisAddr != "" && rd0.Fields != nil {
		var err error
		if rd1, err = fetchRedisInfo(c.RedisAddr); err != nil {
			fmt.Fprintln(log, "wsload:", err)
		}
	}
	cli1, _ := readProc(os.Getpid())
	l.wmu.Lock()
	ws := make([]*waiter, 0, len(l.waiters))
	for w := range l.waiters {
		ws = append(ws, w)
	}
	l.wmu.Unlock()
	l.tr.mu.Lock()
	moving := l.tr.movingSince
	l.tr.mu.Unlock()
	rep.Overdue = summarize(overdue(ws, w1, moving), ms(c.LateLimit))

	stopSampler()
	<-sampDone
	fmt.Fprintf(log, "wsload: closing %d WebSockets\n", l.open.Load())
	stopVisitors()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		fmt.Fprintln(log, "wsload: some connections did not close within 15s")
	}

	// Results.
	rep.Visitors = l.visitors.Load()
	rep.OpenMin, rep.OpenMax, rep.WaitingMin, rep.WaitingMean = samp.openMin, samp.openMax, samp.waitingMin, samp.waitingMean()
	tr := l.tr
	tr.mu.Lock()
	var all []float64
	rep.LatenessByTier = map[string]dist{}
	for k, xs := range tr.late[phaseWindow] {
		all = append(all, xs...)
		rep.LatenessByTier[fmt.Sprintf("%d", k)] = summarize(xs, ms(c.LateLimit))
	}
	rep.Lateness = summarize(all, ms(c.LateLimit))
	rep.LatenessHist = histogram(all, 50)
	var ramp []float64
	for _, p := range []phase{phaseRamp, phaseSettle} {
		for _, xs := range tr.late[p] {
			ramp = append(ramp, xs...)
		}
	}
	rep.LatenessRamp = summarize(ramp, ms(c.LateLimit))
	rep.Early = tr.early[phaseWindow]
	rep.Admission = summarize(tr.admit[phaseWindow], ms(c.AdmitLimit))
	rep.AdmissionRamp = summarize(append(slices.Clone(tr.admit[phaseRamp]), tr.admit[phaseSettle]...), ms(c.AdmitLimit))
	rep.SlowAdmitsAt = tr.slowAdmits
	rep.Finals = tr.finals[phaseWindow]
	rep.Messages = tr.msgs[phaseWindow]
	rep.BadMessages = tr.badMsgs
	tr.mu.Unlock()

	win := w1.Sub(w0).Seconds()
	if c.ServerPID > 0 {
		s := &serverReport{
			RSSBefore: before.RSS, RSSAtWindow: srv0.RSS, RSSPeak: max(samp.rssPeak, srv0.RSS, srv1.RSS), HWM: srv1.HWM,
			Threads: srv1.Threads, FDs: samp.fdPeak, CPUCores: (srv1.CPU - srv0.CPU) / win,
		}
		s.BytesPerConn = (s.RSSPeak - s.RSSBefore) / max(samp.openAtPeak, 1)
		if goErr == nil && goWinErr == nil {
			s.GoBefore, s.GoAtWindow = &goBefore, &goWin
			n := max(rep.OpenAtWindow, 1)
			s.HeapBytesPerConn = (goWin.HeapInuse - goBefore.HeapInuse) / n
			s.GoBytesPerConn = s.HeapBytesPerConn + (goWin.StackInuse-goBefore.StackInuse)/n
		}
		rep.Server = s
		rep.Pass["rss"] = s.RSSPeak < c.RSSLimit
	}
	if rd1.Fields != nil {
		r := &redisReport{
			Commands:   rd1.int("total_commands_processed") - rd0.int("total_commands_processed") - 1, // our own INFO
			ByCommand:  map[string]int64{},
			CPUCores:   (rd1.float("used_cpu_sys") + rd1.float("used_cpu_user") - rd0.float("used_cpu_sys") - rd0.float("used_cpu_user")) / win,
			UsedMemory: rd1.int("used_memory"),
		}
		for name, n := range rd1.Calls {
			if d := n - rd0.Calls[name]; d > 0 && name != "info" {
				r.ByCommand[name] = d
			}
		}
		r.Scripts = r.ByCommand["evalsha"] + r.ByCommand["eval"]
		r.Enters, r.StatusReads = r.ByCommand["incr"], r.ByCommand["zrank"]
		if rep.WaitingMean > 0 {
			r.PerWaiterPerSecond = float64(r.Commands) / rep.WaitingMean / win
			r.ScriptsPerWaiterS = float64(r.Scripts) / rep.WaitingMean / win
			r.StatusPerWaiterS = float64(r.StatusReads) / rep.WaitingMean / win
		}
		rep.Redis = r
	}
	rep.Client = clientReport{RSSPeak: max(cli1.RSS, samp.clientRSSPeak), CPUCores: (cli1.CPU - cli0.CPU) / win, Goroutines: samp.goroutinesPeak}
	// A replaced waiter is missing for the moment between its admission and
	// its successor's handshake: allow 1% of the target in those gaps.
	rep.Pass["conns"] = rep.OpenAtWindow >= int64(c.Conns) && float64(rep.WaitingMin) >= 0.99*float64(c.Conns)
	rep.Pass["lateness_p99"] = rep.Lateness.N > 0 && rep.Lateness.P99 <= ms(c.LateLimit)
	rep.Pass["admission_p99"] = rep.Admission.N > 0 && rep.Admission.P99 <= ms(c.AdmitLimit)
	return rep, nil
}

// putRoom creates or replaces the room with jitter 0, so orderable_at is the
// admission time, and the configured pace.
func (l *loader) putRoom(ctx context.Context, paused bool) error {
	body, _ := json.Marshal(map[string]any{
		"capacity": l.c.Capacity, "batch_size": l.c.BatchSize, "batch_interval_ms": l.c.BatchEvery.Milliseconds(),
		"jitter_ms": 0, "paused": paused, "title": "wsload",
		// It measures push fan-out, not what a place costs.
		"bot_protection": map[string]string{"proof_of_work": "off"},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, l.c.URL+"/admin/api/rooms/"+url.PathEscape(l.c.Room), strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+l.c.AdminToken)
	resp, err := l.enter.Do(req)
	if err != nil {
		return fmt.Errorf("put room: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("put room: %s: %s", resp.Status, b)
	}
	return nil
}

// visitor runs one place in the crowd: enter, hold the WebSocket until the
// ticket settles, then (with --replenish) start over as a new visitor.
func (l *loader) visitor(ctx context.Context, sem chan struct{}) {
	for ctx.Err() == nil && l.ph() < phaseDone {
		if l.visitors.Add(1) > int64(l.c.MaxVisitors) {
			return
		}
		again := l.once(ctx, sem)
		if !again || !l.c.Replenish {
			return
		}
	}
}

// once is one visitor from enter to its last message. It reports whether
// the place should be taken by a new visitor.
func (l *loader) once(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	ticket, cookie, err := l.enterRoom(ctx)
	if err != nil {
		<-sem
		if ctx.Err() == nil {
			l.fail("enter: " + err.Error())
			sleepCtx(ctx, 200*time.Millisecond)
		}
		return true
	}
	u := strings.Replace(l.c.URL, "http://", "ws://", 1) + "/api/rooms/" + url.PathEscape(l.c.Room) + "/tickets/" + url.PathEscape(ticket) + "/ws"
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{
		HTTPClient: l.ws,
		HTTPHeader: http.Header{"Cookie": {cookie}},
	})
	cancel()
	<-sem
	if err != nil {
		if ctx.Err() == nil {
			kind := "dial"
			if resp != nil {
				kind = fmt.Sprintf("dial: HTTP %d", resp.StatusCode)
			} else if errors.Is(err, syscall.EADDRNOTAVAIL) {
				kind = "dial: no ephemeral port (EADDRNOTAVAIL)"
			} else if errors.Is(err, syscall.EMFILE) {
				kind = "dial: too many open files (EMFILE)"
			}
			l.fail(kind)
			sleepCtx(ctx, 200*time.Millisecond)
		}
		return true
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 10)

	w := &waiter{}
	id := l.nextID.Add(1)
	l.wmu.Lock()
	l.waiters[w] = struct{}{}
	l.wmu.Unlock()
	l.open.Add(1)
	l.waiting.Add(1)
	isWaiting := true
	defer func() {
		l.wmu.Lock()
		delete(l.waiters, w)
		l.wmu.Unlock()
		l.open.Add(-1)
		if isWaiting {
			l.waiting.Add(-1)
		}
	}()
	for {
		typ, data, err := conn.Read(ctx)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil || l.ph() >= phaseDone {
				return false
			}
			// The server hung up on a waiter that was not settled.
			status := websocket.CloseStatus(err)
			l.wmu.Lock()
			if status == -1 {
				l.closes["no close frame"]++
			} else {
				l.closes[status.String()]++
			}
			l.wmu.Unlock()
			return true
		}
		var m ticketMsg
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil || m.State == "" {
			l.tr.mu.Lock()
			l.tr.badMsgs++
			l.tr.mu.Unlock()
			continue
		}
		if l.trace != nil {
			l.traceMu.Lock()
			fmt.Fprintf(l.trace, "%.1f,%d,%s,%s,%d,%d\n", ms(now.Sub(l.start)), id, l.ph(), m.State, m.Position, m.NextUpdateMS)
			l.traceMu.Unlock()
		}
		if l.tr.observe(w, m, now, l.ph()) {
			// Settled: a browser would navigate away now.
			isWaiting = false
			l.waiting.Add(-1)
			_ = conn.Close(websocket.StatusNormalClosure, "")
			return true
		}
	}
}

// enterRoom enters as a new visitor and returns the ticket id and the
// visitor cookie ("wr_vid=…").
func (l *loader) enterRoom(ctx context.Context) (ticket, cookie string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.c.URL+"/api/rooms/"+url.PathEscape(l.c.Room)+"/enter", strings.NewReader("{}"))
	if err != nil {
		return "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.enter.Do(req)
	if err != nil {
		return "", "", errors.New("transport")
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", "", errors.New("transport")
	}
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var m ticketMsg
	if err := json.Unmarshal(b, &m); err != nil || m.Ticket == "" {
		return "", "", errors.New("bad ticket JSON")
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "wr_vid" {
			return m.Ticket, ck.Name + "=" + ck.Value, nil
		}
	}
	return "", "", errors.New("no wr_vid cookie")
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// sampler reads the server's and this process's memory and the open counts
// once a second.
type sampler struct {
	l   *loader
	pid int

	mu             sync.Mutex
	inWindow       bool
	rssPeak        int64
	openAtPeak     int64
	fdPeak         int
	clientRSSPeak  int64
	goroutinesPeak int
	openMin        int64
	openMax        int64
	waitingMin     int64
	waitingSum     float64
	samples        int
}

func newSampler(l *loader, pid int) *sampler {
	return &sampler{l: l, pid: pid, openMin: -1, waitingMin: -1}
}

func (s *sampler) startWindow() {
	s.mu.Lock()
	s.inWindow = true
	s.mu.Unlock()
	s.sample()
}

func (s *sampler) loop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample()
		}
	}
}

func (s *sampler) sample() {
	open, waiting := s.l.open.Load(), s.l.waiting.Load()
	var srv procStat
	if s.pid > 0 {
		srv, _ = readProc(s.pid)
	}
	cli, _ := readProc(os.Getpid())
	g := runtime.NumGoroutine()
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv.RSS > s.rssPeak {
		s.rssPeak, s.openAtPeak = srv.RSS, open
	}
	s.fdPeak = max(s.fdPeak, srv.FDs)
	s.clientRSSPeak = max(s.clientRSSPeak, cli.RSS)
	s.goroutinesPeak = max(s.goroutinesPeak, g)
	if !s.inWindow {
		return
	}
	if s.openMin < 0 || open < s.openMin {
		s.openMin = open
	}
	if s.waitingMin < 0 || waiting < s.waitingMin {
		s.waitingMin = waiting
	}
	s.openMax = max(s.openMax, open)
	s.waitingSum += float64(waiting)
	s.samples++
}

func (s *sampler) waitingMean() float64 {
	if s.samples == 0 {
		return 0
	}
	return s.waitingSum / float64(s.samples)
}

func printSummary(w io.Writer, c config, r *report) {
	mb := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	ok := func(k string) string {
		v, set := r.Pass[k]
		switch {
		case !set:
			return ""
		case v:
			return "  [meets target]"
		}
		return "  [MISSES target]"
	}
	d := func(x dist) string {
		return fmt.Sprintf("n=%d p50=%.1f p90=%.1f p99=%.1f max=%.1f ms, %d over %.0f ms", x.N, x.P50, x.P90, x.P99, x.Max, x.Over, x.Limit)
	}
	fmt.Fprintf(w, "== wsload: %d WebSocket waiters, window %.1fs (ramp %.1fs)\n", c.Conns, r.WindowS, r.RampS)
	fmt.Fprintf(w, "open:       %d at window start; min %d, max %d; waiting min %d, mean %.0f%s\n",
		r.OpenAtWindow, r.OpenMin, r.OpenMax, r.WaitingMin, r.WaitingMean, ok("conns"))
	fmt.Fprintf(w, "visitors:   %d started; messages in window %d; finals %v\n", r.Visitors, r.Messages, r.Finals)
	fmt.Fprintf(w, "lateness:   %s%s\n", d(r.Lateness), ok("lateness_p99"))
	tiers := make([]string, 0, len(r.LatenessByTier))
	for k := range r.LatenessByTier {
		tiers = append(tiers, k)
	}
	slices.SortFunc(tiers, func(a, b string) int { return len(a)*100 - len(b)*100 + strings.Compare(a, b) })
	for _, k := range tiers {
		fmt.Fprintf(w, "  tier %5s ms: %s\n", k, d(r.LatenessByTier[k]))
	}
	fmt.Fprintf(w, "  histogram, 50 ms buckets from 0: %v\n", r.LatenessHist)
	fmt.Fprintf(w, "  during ramp+settle: %s\n", d(r.LatenessRamp))
	fmt.Fprintf(w, "  still waiting past their promise at the end: %s\n", d(r.Overdue))
	fmt.Fprintf(w, "  updates sooner than promised: %d\n", r.Early)
	fmt.Fprintf(w, "admission:  %s%s\n", d(r.Admission), ok("admission_p99"))
	if len(r.SlowAdmitsAt) > 0 {
		fmt.Fprintf(w, "  over the limit at (s into the window): %v\n", r.SlowAdmitsAt)
	}
	fmt.Fprintf(w, "  during ramp+settle: %s\n", d(r.AdmissionRamp))
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "server:     RSS %s before, %s at window start, %s peak (VmHWM %s); %d bytes/conn; %d threads, %d fds; %.2f cores%s\n",
			mb(s.RSSBefore), mb(s.RSSAtWindow), mb(s.RSSPeak), mb(s.HWM), s.BytesPerConn, s.Threads, s.FDs, s.CPUCores, ok("rss"))
		if g0, g1 := s.GoBefore, s.GoAtWindow; g0 != nil && g1 != nil {
			fmt.Fprintf(w, "  Go runtime at window start: heap %s, stacks %s, %d goroutines (before: %s, %s, %d); %d bytes/conn heap+stacks, %d heap\n",
				mb(g1.HeapInuse), mb(g1.StackInuse), g1.Goroutines, mb(g0.HeapInuse), mb(g0.StackInuse), g0.Goroutines, s.GoBytesPerConn, s.HeapBytesPerConn)
		}
	}
	if rd := r.Redis; rd != nil {
		fmt.Fprintf(w, "redis:      %d commands (%.3f per waiter per s, inside scripts included); %d script calls (%.3f per waiter per s); %.2f cores; used_memory %s\n",
			rd.Commands, rd.PerWaiterPerSecond, rd.Scripts, rd.ScriptsPerWaiterS, rd.CPUCores, mb(rd.UsedMemory))
		names := make([]string, 0, len(rd.ByCommand))
		for k := range rd.ByCommand {
			names = append(names, k)
		}
		slices.SortFunc(names, func(a, b string) int { return int(rd.ByCommand[b] - rd.ByCommand[a]) })
		var parts []string
		for _, k := range names[:min(len(names), 10)] {
			parts = append(parts, fmt.Sprintf("%s=%d", k, rd.ByCommand[k]))
		}
		fmt.Fprintf(w, "  %d enters, %d status reads of waiting tickets (%.3f per waiter per s)\n", rd.Enters, rd.StatusReads, rd.StatusPerWaiterS)
		fmt.Fprintf(w, "  by command: %s\n", strings.Join(parts, " "))
	}
	fmt.Fprintf(w, "client:     RSS %s peak, %.2f cores, %d goroutines peak\n", mb(r.Client.RSSPeak), r.Client.CPUCores, r.Client.Goroutines)
	if len(r.Errors) > 0 || len(r.ServerCloses) > 0 || r.BadMessages > 0 {
		fmt.Fprintf(w, "problems:   errors %v; server closed waiting sockets %v; bad messages %d\n", r.Errors, r.ServerCloses, r.BadMessages)
	}
}
