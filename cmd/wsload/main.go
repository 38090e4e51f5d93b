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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// Hard ceilings, so that a typo cannot turn a benchmark into a flood.
const (
	maxConns       = 200_000
	maxConcurrency = 2000
	maxDuration    = 15 * time.Minute
)

type config struct {
	URL         string   // the first of URLs
	URLs        []string // every server's base URL; visitors are spread over them
	Stages      []int    // open counts measured one after another (default: --conns)
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
	ServerPIDs  []int
	KillPID     int
	Peers       int
	KillAfter   time.Duration
	RedisAddr   string
	LateLimit   time.Duration
	AdmitLimit  time.Duration
	RSSLimit    int64
	Trace       string
	Barrier     string
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	var urls, stages, pids string
	fs := flag.NewFlagSet("wsload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&urls, "url", "http://127.0.0.1:8080", "waitroom base URLs, comma-separated (servers sharing one Redis; visitors are spread over them); loopback addresses only")
	fs.StringVar(&stages, "stages", "", "open counts to measure one after another in one run, comma-separated and rising (e.g. 10000,50000,100000), each with its own settle and window; the last is --conns (default: --conns alone)")
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
	fs.StringVar(&pids, "server-pid", "", "waitroom pids, comma-separated: their RSS and CPU are read from /proc and summed")
	fs.IntVar(&c.KillPID, "kill-pid", 0, "one of --server-pid to kill (SIGKILL) --kill-after into the last window: its waiters reconnect to the others")
	fs.DurationVar(&c.KillAfter, "kill-after", 0, "when to kill --kill-pid, into the last window")
	fs.IntVar(&c.Peers, "peers", 1, "this process is one of N alike holding the crowd together (one process opens at most its open-file limit): per-waiter Redis and per-socket server figures divide by N times its own count")
	fs.StringVar(&c.RedisAddr, "redis-addr", "", "the server's Redis (host:port, loopback): its command counts are read with INFO")
	fs.DurationVar(&c.LateLimit, "late-limit", 500*time.Millisecond, "target: p99 of update lateness beyond the tier interval")
	fs.DurationVar(&c.AdmitLimit, "admit-limit", 250*time.Millisecond, "target: p99 of admission latency")
	fs.Int64Var(&c.RSSLimit, "rss-limit", 1<<30, "target: server resident memory at peak, bytes")
	fs.StringVar(&c.Barrier, "barrier", "", "a directory shared with the --peers: they start each window together and end it together, so none ramps or closes inside another's window")
	fs.StringVar(&c.Trace, "trace", "", "write every message's receive time, visitor, state, position and next_update_ms to this file (CSV)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.Stages, err = parseInts(stages); err != nil {
		return c, fmt.Errorf("--stages: %w", err)
	}
	if len(c.Stages) > 0 {
		for i := 1; i < len(c.Stages); i++ {
			if c.Stages[i] <= c.Stages[i-1] {
				return c, errors.New("--stages: want rising counts")
			}
		}
		c.Conns = c.Stages[len(c.Stages)-1]
	} else {
		c.Stages = []int{c.Conns}
	}
	if c.ServerPIDs, err = parseInts(pids); err != nil {
		return c, fmt.Errorf("--server-pid: %w", err)
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
	case c.Peers < 1 || c.Peers > 64:
		return c, errors.New("--peers: want 1..64")
	case len(c.Stages) > 10 || c.Stages[0] < 1:
		return c, errors.New("--stages: want 1..10 counts, each at least 1")
	case c.KillPID != 0 && !slices.Contains(c.ServerPIDs, c.KillPID):
		return c, errors.New("--kill-pid: want one of --server-pid")
	case c.KillPID != 0 && (c.KillAfter <= 0 || c.KillAfter >= c.Duration):
		return c, errors.New("--kill-after: want (0, --duration)")
	case c.KillPID != 0 && len(c.ServerPIDs) < 2:
		return c, errors.New("--kill-pid: needs another server to take over")
	}
	for u := range strings.SplitSeq(urls, ",") {
		if _, err := checkLoopbackURL(u); err != nil {
			return c, err
		}
		c.URLs = append(c.URLs, strings.TrimRight(u, "/"))
	}
	c.URL = c.URLs[0]
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

// parseInts reads a comma-separated list of positive integers ("" is none).
func parseInts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
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
	reps, err := run(ctx, c, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsload:", err)
		os.Exit(1)
	}
	for _, rep := range reps {
		printSummary(os.Stdout, c, rep)
	}
	// One JSON line: the report itself for one stage, a list for several.
	var line []byte
	if len(reps) == 1 {
		line, _ = json.Marshal(reps[0])
	} else {
		line, _ = json.Marshal(reps)
	}
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
	nextURL  atomic.Uint32
}

// pick is the server the next visitor goes to: round robin, so a dead one
// costs a retry, not a visitor.
func (l *loader) pick() int {
	return int(l.nextURL.Add(1) % uint32(len(l.c.URLs)))
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
	Cut          bool    `json:"cut_short,omitempty"` // stopped (signal or bound) before its window ended: no window figures
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
	Reconnects     int             `json:"reconnects"`    // sockets redialed on another server after theirs went away
	Pace           paceReport      `json:"pace"`

	Server *serverReport   `json:"server,omitempty"`
	Redis  *redisReport    `json:"redis,omitempty"`
	Client clientReport    `json:"client"`
	Pass   map[string]bool `json:"pass"`
}

type serverReport struct {
	Servers      int     `json:"servers"` // every figure is the sum over them
	RSSBefore    int64   `json:"rss_before"`
	RSSAtWindow  int64   `json:"rss_at_window_start"`
	RSSPeak      int64   `json:"rss_peak"`
	HWM          int64   `json:"vm_hwm"`
	BytesPerConn int64   `json:"bytes_per_conn"` // (at window start - before) / open at window start
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
	Scripts            int64            `json:"script_calls"`              // FCALL + EVALSHA + EVAL: round trips a client made
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

func run(ctx context.Context, c config, log io.Writer) ([]*report, error) {
	// The whole run stops by itself even if a phase misbehaves; each stage
	// also reads every server's /metrics (up to 30 s each on a busy machine).
	n := time.Duration(len(c.Stages))
	reads := time.Duration(2*len(c.URLs)) * 30 * time.Second
	bound := n*(c.RampTimeout+c.Settle+c.Duration+reads) + 30*time.Second
	if c.Barrier != "" {
		bound += n * (c.RampTimeout + c.Settle + c.Duration) // waiting for the slowest peer
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
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

	var before procStat
	if len(c.ServerPIDs) > 0 {
		var err error
		if before, err = readProcs(c.ServerPIDs, true, true); err != nil {
			return nil, fmt.Errorf("--server-pid: %w", err)
		}
	}
	goBefore, goErr := fetchGoMems(ctx, c.URLs)
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

	vctx, stopVisitors := context.WithCancel(ctx)
	context.AfterFunc(vctx, l.closeAll)
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.Concurrency)
	samp := newSampler(l, c.ServerPIDs)
	sctx, stopSampler := context.WithCancel(ctx)
	sampDone := make(chan struct{})
	go func() { defer close(sampDone); samp.loop(sctx) }()

	var reps []*report
	opened := 0
	for i, target := range c.Stages {
		// Ramp: open up to target; replenishing visitors keep the count after.
		for range target - opened {
			wg.Go(func() { l.visitor(vctx, sem) })
		}
		opened = target
		rep := l.stage(ctx, target, i == len(c.Stages)-1, before, goBefore, goErr, samp)
		reps = append(reps, rep)
		if ctx.Err() != nil {
			break
		}
	}

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
	last := reps[len(reps)-1]
	last.Visitors = l.visitors.Load()
	l.tr.mu.Lock()
	last.BadMessages = l.tr.badMsgs
	l.tr.mu.Unlock()
	l.errMu.Lock()
	last.Errors = maps.Clone(l.errs)
	l.errMu.Unlock()
	l.wmu.Lock()
	last.ServerCloses = maps.Clone(l.closes)
	l.wmu.Unlock()
	return reps, nil
}

// stage opens target connections (its visitors are already started),
// settles, measures one window and reports it. The last stage ends in
// phaseDone; the others go back to ramping for the next.
func (l *loader) stage(ctx context.Context, target int, last bool, before procStat, goBefore goMem, goErr error, samp *sampler) *report {
	c, log := l.c, l.log
	rep := &report{Conns: target, Pass: map[string]bool{}}
	l.phase.Store(int32(phaseRamp))
	samp.startRamp()
	start := time.Now()
	fmt.Fprintf(log, "wsload: opening %d WebSockets over %d server(s) (room %q, %d at a time)\n", target, len(c.URLs), c.Room, c.Concurrency)
	rampDeadline := time.NewTimer(c.RampTimeout)
	defer rampDeadline.Stop()
	progress := time.NewTicker(2 * time.Second)
	// Admitted waiters are replaced as the line moves, so the count hovers a
	// little below the target once reached: the ramp ends within 0.5% of it.
	enough := int64(target - target/200)
ramp:
	for l.open.Load() < enough {
		select {
		case <-ctx.Done():
			break ramp
		case <-rampDeadline.C:
			fmt.Fprintf(log, "wsload: ramp timed out with %d of %d open\n", l.open.Load(), target)
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
	sleepCtx(ctx, c.Settle)
	l.meet(ctx, fmt.Sprintf("stage%d-ready", target))

	// Window.
	var srv0 procStat
	var rd0 redisInfo
	if len(c.ServerPIDs) > 0 {
		srv0, _ = readProcs(c.ServerPIDs, false, true)
	}
	goWin, goWinErr := fetchGoMems(ctx, c.URLs)
	if goWinErr != nil {
		fmt.Fprintln(log, goWinErr)
	}
	if c.RedisAddr != "" {
		var err error
		if rd0, err = fetchRedisInfo(c.RedisAddr); err != nil {
			fmt.Fprintln(log, "wsload:", err)
		}
	}
	cli0, _ := readProc(os.Getpid(), true)
	rep.OpenAtWindow = l.open.Load()
	samp.startWindow()
	w0 := time.Now()
	l.tr.mu.Lock()
	l.tr.windowStart, l.tr.admitLimit = w0, c.AdmitLimit
	l.tr.mu.Unlock()
	l.phase.Store(int32(phaseWindow))
	if last && c.StartPaused && c.AdminToken != "" {
		if err := l.putRoom(ctx, false); err != nil {
			fmt.Fprintln(log, "wsload:", err)
		}
		l.tr.setMovingSince(time.Now())
	}
	fmt.Fprintf(log, "wsload: measuring for %s with %d open\n", c.Duration, rep.OpenAtWindow)
	var killedAt time.Time
	if last && c.KillPID != 0 {
		select {
		case <-ctx.Done():
		case <-time.After(c.KillAfter):
			// A crash, not a shutdown: the server gets no chance to hand over.
			if err := syscall.Kill(c.KillPID, syscall.SIGKILL); err != nil {
				fmt.Fprintf(log, "wsload: kill %d: %v\n", c.KillPID, err)
			} else {
				killedAt = time.Now()
				fmt.Fprintf(log, "wsload: killed server %d %.1fs into the window\n", c.KillPID, killedAt.Sub(w0).Seconds())
			}
		}
		sleepCtx(ctx, c.Duration-c.KillAfter)
	} else {
		sleepCtx(ctx, c.Duration)
	}
	w1 := time.Now()
	if last || ctx.Err() != nil {
		l.phase.Store(int32(phaseDone))
	} else {
		l.phase.Store(int32(phaseRamp))
	}
	rep.WindowS = w1.Sub(w0).Seconds()
	if ctx.Err() != nil {
		rep.Cut = true
		fmt.Fprintf(log, "wsload: stage of %d cut short after %.1fs of its window\n", target, rep.WindowS)
		samp.endWindow()
		l.tr.take()
		return rep
	}

	// Read the end state before anything closes.
	var srv1 procStat
	var rd1 redisInfo
	if len(c.ServerPIDs) > 0 {
		srv1, _ = readProcs(c.ServerPIDs, false, true)
	}
	if c.RedisAddr != "" && rd0.Fields != nil {
		var err error
		if rd1, err = fetchRedisInfo(c.RedisAddr); err != nil {
			fmt.Fprintln(log, "wsload:", err)
		}
	}
	cli1, _ := readProc(os.Getpid(), true)
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

	// Results: the tracker's samples of this stage, which start it afresh.
	rep.OpenMin, rep.OpenMax, rep.WaitingMin, rep.WaitingMean = samp.endWindow()
	tr := l.tr.take()
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
	rep.Reconnects = tr.reconnects
	rep.Pace = pace(tr.admits, killedAt, c.BatchSize, c.BatchEvery)

	win := w1.Sub(w0).Seconds()
	if len(c.ServerPIDs) > 0 {
		s := &serverReport{
			Servers: len(c.ServerPIDs), RSSBefore: before.RSS, RSSAtWindow: srv0.RSS, RSSPeak: max(samp.rssPeak, srv0.RSS, srv1.RSS), HWM: srv1.HWM,
			Threads: srv1.Threads, FDs: samp.fdPeak, CPUCores: (srv1.CPU - srv0.CPU) / win,
		}
		// Every peer holds about as many as this one.
		crowd := max(rep.OpenAtWindow, 1) * int64(c.Peers)
		s.BytesPerConn = (s.RSSAtWindow - s.RSSBefore) / crowd
		if goErr == nil && goWinErr == nil {
			s.GoBefore, s.GoAtWindow = &goBefore, &goWin
			n := crowd
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
		r.Scripts = r.ByCommand["fcall"] + r.ByCommand["evalsha"] + r.ByCommand["eval"]
		r.Enters, r.StatusReads = r.ByCommand["incr"], r.ByCommand["zrank"]
		if rep.WaitingMean > 0 {
			waiting := rep.WaitingMean * float64(c.Peers)
			r.PerWaiterPerSecond = float64(r.Commands) / waiting / win
			r.ScriptsPerWaiterS = float64(r.Scripts) / waiting / win
			r.StatusPerWaiterS = float64(r.StatusReads) / waiting / win
		}
		rep.Redis = r
	}
	rep.Client = clientReport{RSSPeak: max(cli1.RSS, samp.clientRSSPeak), CPUCores: (cli1.CPU - cli0.CPU) / win, Goroutines: samp.goroutinesPeak}
	// A replaced waiter is missing for the moment between its admission and
	// its successor's handshake: allow 1% of the target in those gaps.
	rep.Pass["conns"] = rep.OpenAtWindow >= int64(target) && float64(rep.WaitingMin) >= 0.99*float64(target)
	rep.Pass["lateness_p99"] = rep.Lateness.N > 0 && rep.Lateness.P99 <= ms(c.LateLimit)
	rep.Pass["admission_p99"] = rep.Admission.N > 0 && rep.Admission.P99 <= ms(c.AdmitLimit)
	l.errMu.Lock()
	rep.Errors = maps.Clone(l.errs)
	l.errMu.Unlock()
	l.wmu.Lock()
	rep.ServerCloses = maps.Clone(l.closes)
	l.wmu.Unlock()
	rep.Visitors = l.visitors.Load()
	l.meet(ctx, fmt.Sprintf("stage%d-done", target))
	return rep
}

// meet waits for the peers at point when they share a --barrier: at most
// as long as a stage may take.
func (l *loader) meet(ctx context.Context, point string) {
	c := l.c
	if c.Barrier == "" {
		return
	}
	fmt.Fprintf(l.log, "wsload: waiting for %d peers at %s\n", c.Peers, point)
	if err := meet(ctx, c.Barrier, point, strconv.Itoa(os.Getpid()), c.Peers, c.RampTimeout+c.Settle+c.Duration); err != nil {
		fmt.Fprintln(l.log, err)
	}
}

// putRoom creates or replaces the room with jitter 0, so orderable_at is the
// admission time, and the configured pace. A server that cannot reach Redis
// yet (503, busy machine) is asked again, for up to half a minute.
func (l *loader) putRoom(ctx context.Context, paused bool) error {
	var err error
	for range 15 {
		var retry bool
		if retry, err = l.putRoomOnce(ctx, paused); !retry {
			return err
		}
		fmt.Fprintln(l.log, "wsload:", err, "(asking again)")
		sleepCtx(ctx, 2*time.Second)
	}
	return err
}

func (l *loader) putRoomOnce(ctx context.Context, paused bool) (retry bool, err error) {
	body, _ := json.Marshal(map[string]any{
		"capacity": l.c.Capacity, "batch_size": l.c.BatchSize, "batch_interval_ms": l.c.BatchEvery.Milliseconds(),
		"jitter_ms": 0, "paused": paused, "title": "wsload",
		// It measures push fan-out, not what a place costs, nor how one
		// address's admitted visitors come to checkout (they never do).
		"bot_protection": map[string]any{"proof_of_work": "off", "unarrived_per_network": 0},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, l.c.URL+"/admin/api/rooms/"+url.PathEscape(l.c.Room), strings.NewReader(string(body)))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+l.c.AdminToken)
	resp, err := l.enter.Do(req)
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("put room: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode == http.StatusServiceUnavailable, fmt.Errorf("put room: %s: %s", resp.Status, b)
	}
	return false, nil
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
	srv := l.pick()
	ticket, cookie, err := l.enterRoom(ctx, l.c.URLs[srv])
	if err != nil {
		<-sem
		if ctx.Err() == nil {
			l.fail("enter: " + err.Error())
			sleepCtx(ctx, 200*time.Millisecond)
		}
		return true
	}
	conn, err := l.dial(ctx, srv, ticket, cookie)
	<-sem
	if err != nil {
		return true
	}
	w := &waiter{conn: conn}
	id := l.nextID.Add(1)
	l.wmu.Lock()
	l.waiters[w] = struct{}{}
	l.wmu.Unlock()
	l.open.Add(1)
	l.waiting.Add(1)
	isOpen, isWaiting := true, true
	defer func() {
		if conn != nil {
			conn.CloseNow()
		}
		l.wmu.Lock()
		delete(l.waiters, w)
		l.wmu.Unlock()
		if isOpen {
			l.open.Add(-1)
		}
		if isWaiting {
			l.waiting.Add(-1)
		}
	}()
	// Reads take no context (one would cost a callback per read): closeAll
	// ends them when ctx ends, and a waiter registered after that sees ctx.
	if ctx.Err() != nil {
		return false
	}
	var buf bytes.Buffer // one message at a time, reused
	for {
		typ, data, err := readMessage(conn, &buf)
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
			if status != -1 || len(l.c.URLs) < 2 {
				return true
			}
			// No close frame: the server went away. A browser behind a
			// balancer reconnects the same ticket to another server.
			conn.CloseNow()
			conn = nil
			l.open.Add(-1)
			isOpen = false
			if conn, srv = l.redial(ctx, sem, srv, ticket, cookie); conn == nil {
				return ctx.Err() == nil && l.ph() < phaseDone
			}
			w.mu.Lock()
			w.conn = conn
			w.mu.Unlock()
			if ctx.Err() != nil {
				return false
			}
			l.open.Add(1)
			isOpen = true
			w.mu.Lock()
			w.reconnected, w.msgs = true, 0 // the gap offline is not the push path's
			w.mu.Unlock()
			l.tr.mu.Lock()
			l.tr.reconnects++
			l.tr.mu.Unlock()
			continue
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

// readMessage reads the next message into buf, which it resets, without a
// context: the connection is closed to end it.
func readMessage(conn *websocket.Conn, buf *bytes.Buffer) (websocket.MessageType, []byte, error) {
	typ, r, err := conn.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	buf.Reset()
	if _, err := buf.ReadFrom(r); err != nil {
		return 0, nil, err
	}
	return typ, buf.Bytes(), nil
}

// closeAll closes every waiter's connection, which ends its read: the
// run's end.
func (l *loader) closeAll() {
	l.wmu.Lock()
	ws := make([]*waiter, 0, len(l.waiters))
	for w := range l.waiters {
		ws = append(ws, w)
	}
	l.wmu.Unlock()
	for _, w := range ws {
		w.mu.Lock()
		c := w.conn
		w.mu.Unlock()
		if c != nil {
			c.CloseNow()
		}
	}
}

// dial opens the ticket's WebSocket on server srv; a failure is counted.
func (l *loader) dial(ctx context.Context, srv int, ticket, cookie string) (*websocket.Conn, error) {
	u := strings.Replace(l.c.URLs[srv], "http://", "ws://", 1) + "/api/rooms/" + url.PathEscape(l.c.Room) + "/tickets/" + url.PathEscape(ticket) + "/ws"
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{
		HTTPClient: l.ws,
		HTTPHeader: http.Header{"Cookie": {cookie}},
	})
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
		return nil, err
	}
	conn.SetReadLimit(64 << 10)
	return conn, nil
}

// redial tries the ticket on each other server in turn, --concurrency at a
// time like the ramp, and returns the connection and its server (nil if
// none took it).
func (l *loader) redial(ctx context.Context, sem chan struct{}, srv int, ticket, cookie string) (*websocket.Conn, int) {
	n := len(l.c.URLs)
	for k := 1; k < n; k++ {
		next := (srv + k) % n
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, srv
		}
		conn, err := l.dial(ctx, next, ticket, cookie)
		<-sem
		if err == nil {
			return conn, next
		}
	}
	return nil, srv
}

// enterRoom enters as a new visitor through the server at base and returns
// the ticket id and the visitor cookie ("wr_vid=…").
func (l *loader) enterRoom(ctx context.Context, base string) (ticket, cookie string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/rooms/"+url.PathEscape(l.c.Room)+"/enter", strings.NewReader("{}"))
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
	l     *loader
	pids  []int
	ticks atomic.Int64 // samples taken; the servers' fds are counted every tenth

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

func newSampler(l *loader, pids []int) *sampler {
	return &sampler{l: l, pids: pids, openMin: -1, waitingMin: -1}
}

// startRamp starts a stage's peaks afresh.
func (s *sampler) startRamp() {
	s.mu.Lock()
	s.rssPeak, s.openAtPeak, s.fdPeak, s.clientRSSPeak, s.goroutinesPeak = 0, 0, 0, 0, 0
	s.mu.Unlock()
}

func (s *sampler) startWindow() {
	s.mu.Lock()
	s.inWindow = true
	s.mu.Unlock()
	s.sample()
}

// endWindow returns the window's open and waiting counts and starts them
// afresh for the next stage.
func (s *sampler) endWindow() (openMin, openMax, waitingMin int64, waitingMean float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples > 0 {
		waitingMean = s.waitingSum / float64(s.samples)
	}
	openMin, openMax, waitingMin = s.openMin, s.openMax, s.waitingMin
	s.inWindow, s.openMin, s.openMax, s.waitingMin, s.waitingSum, s.samples = false, -1, 0, -1, 0, 0
	return openMin, openMax, waitingMin, waitingMean
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
	tick := s.ticks.Add(1)
	open, waiting := s.l.open.Load(), s.l.waiting.Load()
	var srv procStat
	if len(s.pids) > 0 {
		srv, _ = readProcs(s.pids, false, tick%10 == 1)
	}
	cli, _ := readProc(os.Getpid(), false)
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
	fmt.Fprintf(w, "== wsload: %d WebSocket waiters over %d server(s), window %.1fs (ramp %.1fs)\n", r.Conns, len(c.URLs), r.WindowS, r.RampS)
	if r.Cut {
		fmt.Fprintf(w, "cut short before the window ended: %d open at its start; no figures\n", r.OpenAtWindow)
		return
	}
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
	p := r.Pace
	pw := func(x paceWindow) string {
		return fmt.Sprintf("%d admissions over %.1fs (%.1f/s); most in any 1 s: %d by admission time, %d by receive time; %d one-second windows over %d",
			x.Admissions, x.Seconds, x.MeanPerS, x.MaxIn1s, x.MaxIn1sHeard, x.StartsOverBound, p.OneAdmitterBound)
	}
	fmt.Fprintf(w, "pace:       configured %.0f/s (one admitter on interval buckets: at most %d in a sliding second)\n", p.ConfiguredPerS, p.OneAdmitterBound)
	if p.After != nil {
		fmt.Fprintf(w, "  before the kill: %s\n", pw(p.Before))
		fmt.Fprintf(w, "  after the kill:  %s\n", pw(*p.After))
	} else {
		fmt.Fprintf(w, "  %s\n", pw(p.Before))
	}
	if r.Reconnects > 0 {
		fmt.Fprintf(w, "  sockets reconnected to another server: %d\n", r.Reconnects)
	}
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "server(s): %d;", s.Servers)
		fmt.Fprintf(w, " RSS %s before, %s at window start, %s peak (VmHWM %s); %d bytes/conn; %d threads, %d fds; %.2f cores%s\n",
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
