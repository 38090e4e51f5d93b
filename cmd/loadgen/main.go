// Command loadgen drives a waitroom server on this machine with many
// concurrent visitors and reports throughput and latency percentiles.
//
// It only ever talks to loopback addresses, and every phase stops by itself
// after a bounded number of requests or a bounded time, whichever comes first.
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
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Hard ceilings, so that a typo cannot turn a benchmark into a flood.
const (
	maxConcurrency = 5000
	maxRequests    = 10_000_000
	maxDuration    = 10 * time.Minute
	maxVisitors    = 1_000_000
)

// defaultSettings keep everybody waiting: one slot, held for an hour, and a
// tick a minute, so status reads see waiters and enters grow the line. They
// measure the server, so a place costs no work; with --solve the room asks
// for the product default (defaultSolveSettings).
const (
	defaultSettings      = `{"capacity":1,"batch_size":1,"batch_interval_ms":60000,"jitter_ms":0,"session_ttl_s":3600,"abandon_after_s":3600,"bot_protection":{"proof_of_work":"off"}}`
	defaultSolveSettings = `{"capacity":1,"batch_size":1,"batch_interval_ms":60000,"jitter_ms":0,"session_ttl_s":3600,"abandon_after_s":3600,"bot_protection":{"proof_of_work":"on"}}`
)

type config struct {
	URL         string
	Room        string
	Mode        string
	Concurrency int
	Requests    int64
	Duration    time.Duration
	Warmup      time.Duration
	Timeout     time.Duration
	AdminToken  string
	Settings    string
	Reset       bool
	Visitors    int
	Fresh       bool
	StatusEvery int
	Rate        float64
	Client      string
	JSON        bool
	CPUProfile  string
	Solve       bool
	SolveCores  int
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "waitroom base URL; must be a loopback address")
	fs.StringVar(&c.Room, "room", "bench", "room to load")
	fs.StringVar(&c.Mode, "mode", "enter", "enter, status or mixed (one enter then --status-every status reads per visitor)")
	fs.IntVar(&c.Concurrency, "concurrency", 200, "concurrent clients, each with its own keep-alive connection")
	fs.Int64Var(&c.Requests, "requests", 1_000_000, "most requests of the measured phase (warmup has the same cap)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "most time of the measured phase")
	fs.DurationVar(&c.Warmup, "warmup", time.Second, "unmeasured load before the measured phase")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.StringVar(&c.AdminToken, "admin-token", "", "when set, create or replace the room with --settings first")
	fs.StringVar(&c.Settings, "settings", defaultSettings, "room settings JSON for --admin-token")
	fs.BoolVar(&c.Reset, "reset", false, "delete the room (and its line) before creating it; needs --admin-token")
	fs.IntVar(&c.Visitors, "visitors", 1000, "status mode: visitors entered first, whose tickets are then read")
	fs.BoolVar(&c.Fresh, "fresh", true, "enter mode: every request is a new visitor (no cookie); false: each client re-enters with its own cookie")
	fs.IntVar(&c.StatusEvery, "status-every", 4, "mixed mode: status reads after each enter")
	fs.Float64Var(&c.Rate, "rate", 0, "open load: requests per second due on a fixed schedule, latency counted from when each was due (0: closed loop, each client sends when its last reply came)")
	fs.StringVar(&c.Client, "client", "raw", "raw: a lean HTTP/1.1 client of its own, so the generator takes less of the shared CPU; std: net/http (needed for https)")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON line on stdout (the human report goes to stderr)")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write the load generator's own CPU profile here")
	fs.BoolVar(&c.Solve, "solve", false, "enter mode: solve each proof-of-work challenge as a scripted attacker would (fresh visitors, net/http); the room's settings default to proof of work on")
	fs.IntVar(&c.SolveCores, "solve-cores", runtime.NumCPU(), "--solve: goroutines per solution, each trying every n-th counter")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("loadgen: unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("loadgen: "+format, args...)) }
	switch c.Mode {
	case "enter", "status", "mixed":
	default:
		bad("--mode %q: want enter, status or mixed", c.Mode)
	}
	if c.Concurrency < 1 || c.Concurrency > maxConcurrency {
		bad("--concurrency: must be between 1 and %d", maxConcurrency)
	}
	if c.Requests < 1 || c.Requests > maxRequests {
		bad("--requests: must be between 1 and %d", maxRequests)
	}
	if c.Duration <= 0 || c.Duration > maxDuration {
		bad("--duration: must be above 0 and at most %s", maxDuration)
	}
	if c.Warmup < 0 || c.Warmup > c.Duration {
		bad("--warmup: must be between 0 and --duration")
	}
	if c.Timeout <= 0 || c.Timeout > time.Minute {
		bad("--timeout: must be above 0 and at most 1m")
	}
	if c.Visitors < 1 || c.Visitors > maxVisitors {
		bad("--visitors: must be between 1 and %d", maxVisitors)
	}
	if c.StatusEvery < 0 || c.StatusEvery > 1000 {
		bad("--status-every: must be between 0 and 1000")
	}
	if c.Rate < 0 || c.Rate > 1_000_000 {
		bad("--rate: must be between 0 and 1000000")
	}
	switch c.Client {
	case "raw":
		if strings.HasPrefix(c.URL, "https:") {
			bad("--client raw speaks plain HTTP only; use --client std for https")
		}
	case "std":
	default:
		bad("--client %q: want raw or std", c.Client)
	}
	if c.Solve && (c.Mode != "enter" || !c.Fresh) {
		bad("--solve: only with --mode enter and --fresh")
	}
	if c.SolveCores < 1 || c.SolveCores > 256 {
		bad("--solve-cores: must be between 1 and 256")
	}
	if c.Solve && c.Settings == defaultSettings {
		c.Settings = defaultSolveSettings
	}
	if c.Reset && c.AdminToken == "" {
		bad("--reset needs --admin-token")
	}
	if c.Room == "" || strings.ContainsAny(c.Room, "/?#") {
		bad("--room %q: want a room id", c.Room)
	}
	return errors.Join(errs...)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(1)
	}
}

// result is the JSON line.
type result struct {
	Mode        string              `json:"mode"`
	URL         string              `json:"url"`
	Room        string              `json:"room"`
	Concurrency int                 `json:"concurrency"`
	Client      string              `json:"client"`
	Rate        float64             `json:"rate,omitempty"`
	Fresh       bool                `json:"fresh,omitempty"`
	Visitors    int                 `json:"visitors,omitempty"`
	ElapsedS    float64             `json:"elapsed_s"`
	Total       int64               `json:"total"`
	TotalRPS    float64             `json:"total_rps"`
	Unsent      int64               `json:"unsent,omitempty"` // open loop: due, but dropped as hopelessly late
	Ops         map[string]opReport `json:"ops"`
	Waiting     *int64              `json:"waiting_after,omitempty"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	base, err := checkLoopback(cfg.URL, net.DefaultResolver.LookupIPAddr)
	if err != nil {
		return err
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return fmt.Errorf("loadgen: create cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("loadgen: start cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	human := stdout
	if cfg.JSON {
		human = stderr
	}
	t := newTarget(base, cfg)
	defer t.client.CloseIdleConnections()

	if cfg.AdminToken != "" {
		if err := t.putRoom(ctx, cfg.Reset); err != nil {
			return err
		}
	}

	var visitors []visitor
	switch {
	case cfg.Mode == "status":
		visitors, err = t.enterMany(ctx, cfg.Visitors)
	case cfg.Mode == "enter" && !cfg.Fresh:
		visitors, err = t.enterMany(ctx, cfg.Concurrency)
	}
	if err != nil {
		return err
	}
	if visitors != nil {
		fmt.Fprintf(human, "setup: entered %d visitors\n", len(visitors))
	}

	work := t.workload(ctx, cfg, visitors)
	states := t.workers(cfg.Concurrency)
	defer closeAll(states)
	if cfg.Warmup > 0 {
		phase(ctx, states, cfg.Requests, cfg.Warmup, cfg.Rate, work)
	}
	rec, elapsed, unsent := phase(ctx, states, cfg.Requests, cfg.Duration, cfg.Rate, work)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("loadgen: interrupted: %w", err)
	}

	res := result{Mode: cfg.Mode, URL: base.String(), Room: cfg.Room, Concurrency: cfg.Concurrency,
		Client: cfg.Client, Rate: cfg.Rate, ElapsedS: elapsed.Seconds(), Unsent: unsent, Ops: map[string]opReport{}}
	if cfg.Mode == "enter" {
		res.Fresh = cfg.Fresh
	}
	if cfg.Mode == "status" {
		res.Visitors = len(visitors)
	}
	for name, o := range rec.ops {
		r := o.report(elapsed)
		res.Ops[name] = r
		res.Total += r.Requests
	}
	res.TotalRPS = float64(res.Total) / elapsed.Seconds()
	if cfg.AdminToken != "" {
		if n, err := t.waiting(ctx); err == nil {
			res.Waiting = &n
		} else {
			fmt.Fprintln(stderr, err)
		}
	}
	printHuman(human, res)
	if cfg.JSON {
		line, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("loadgen: encode result: %w", err)
		}
		fmt.Fprintln(stdout, string(line))
	}
	return nil
}

func printHuman(w io.Writer, r result) {
	load := "closed loop"
	if r.Rate > 0 {
		load = fmt.Sprintf("open loop at %.0f/s", r.Rate)
	}
	fmt.Fprintf(w, "loadgen: mode=%s url=%s room=%s concurrency=%d client=%s %s elapsed=%.2fs total=%d (%.0f req/s)\n",
		r.Mode, r.URL, r.Room, r.Concurrency, r.Client, load, r.ElapsedS, r.Total, r.TotalRPS)
	for _, name := range sortedKeys(r.Ops) {
		o := r.Ops[name]
		fmt.Fprintf(w, "  %-6s n=%d ok=%d %.0f req/s  p50=%.2fms p90=%.2fms p99=%.2fms max=%.2fms",
			name, o.Requests, o.OK, o.RPS, o.P50MS, o.P90MS, o.P99MS, o.MaxMS)
		for _, k := range sortedKeys(o.Errors) {
			fmt.Fprintf(w, " err[%s]=%d", k, o.Errors[k])
		}
		fmt.Fprintln(w)
	}
	if r.Unsent > 0 {
		fmt.Fprintf(w, "  unsent: %d requests were due but not sent by twice the duration: the server is far behind the rate\n", r.Unsent)
	}
	if r.Waiting != nil {
		fmt.Fprintf(w, "  room waiting after the run: %d\n", *r.Waiting)
	}
}

// phase runs work on the workers until maxReq requests have started or d has
// passed; requests in flight at the deadline finish (each within --timeout)
// and count, so elapsed covers them too. With rate > 0 the load is open: the
// i-th request is due at start+i/rate, and its latency runs from then, so a
// server that falls behind is charged for the wait it causes. Requests due
// before the deadline but still not started d after it are not sent: they
// come back as unsent, so an overloaded open run ends in at most twice d.
func phase(ctx context.Context, states []*workerState, maxReq int64, d time.Duration, rate float64, work func(w int, i int64, st *workerState)) (rec *recorder, elapsed time.Duration, unsent int64) {
	var next, skipped atomic.Int64
	start := time.Now()
	deadline := start.Add(d)
	hardStop := deadline.Add(d)
	var wg sync.WaitGroup
	for w, st := range states {
		st.rec = newRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= maxReq {
					return
				}
				if rate > 0 {
					st.sched = start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
					if !st.sched.Before(deadline) {
						return
					}
					if time.Now().After(hardStop) {
						skipped.Add(1)
						continue
					}
					time.Sleep(time.Until(st.sched))
				} else {
					st.sched = time.Now()
					if !st.sched.Before(deadline) {
						return
					}
				}
				work(w, i, st)
			}
		}()
	}
	wg.Wait()
	elapsed = time.Since(start)
	rec = newRecorder()
	for _, st := range states {
		rec.merge(st.rec)
	}
	return rec, elapsed, skipped.Load()
}

// workerState is one worker's own: its connection, its samples, when its
// current request was due and, in mixed mode, the visitor it plays.
type workerState struct {
	conn    rawConn
	rec     *recorder
	sched   time.Time
	current visitor
	left    int // status reads left for current
}

func (t *target) workers(n int) []*workerState {
	states := make([]*workerState, n)
	for i := range states {
		states[i] = &workerState{conn: rawConn{addr: t.addr, dialer: t.dialer}}
	}
	return states
}

func closeAll(states []*workerState) {
	for _, st := range states {
		st.conn.close()
	}
}

type visitor struct {
	ticket string
	cookie string  // wr_vid value
	status request // this visitor's status read
}

// request is one API call, its raw bytes built once.
type request struct {
	method, path, cookie string
	raw                  []byte
}

type target struct {
	base   *url.URL
	addr   string // host:port to dial
	room   string
	admin  string
	set    string
	raw    bool
	to     time.Duration
	dialer *net.Dialer
	client *http.Client // admin calls, and every call with --client std
}

func newTarget(base *url.URL, cfg config) *target {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: loopbackOnly}
	tr := &http.Transport{
		Proxy:               nil, // never via a proxy: the target must be the loopback address itself
		DialContext:         dialer.DialContext,
		MaxIdleConns:        cfg.Concurrency,
		MaxIdleConnsPerHost: cfg.Concurrency,
		MaxConnsPerHost:     cfg.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	addr := base.Host
	if base.Port() == "" {
		addr = net.JoinHostPort(base.Hostname(), map[string]string{"http": "80", "https": "443"}[base.Scheme])
	}
	return &target{
		base: base, addr: addr, room: cfg.Room, admin: cfg.AdminToken, set: cfg.Settings,
		raw: cfg.Client == "raw", to: cfg.Timeout, dialer: dialer,
		client: &http.Client{
			Transport: tr,
			// A redirect could lead off loopback; the dialer would refuse it, but
			// no API call here redirects, so one is reported rather than followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

func (t *target) path(p string) string { return strings.TrimRight(t.base.Path, "/") + p }

func (t *target) url(p string) string {
	u := *t.base
	u.Path = t.path(p)
	return u.String()
}

func (t *target) request(method, p, cookie string) request {
	p = t.path(p)
	return request{method: method, path: p, cookie: cookie, raw: rawRequest(method, t.base.Host, p, cookie)}
}

func (t *target) enterRequest() request {
	return t.request(http.MethodPost, "/api/rooms/"+t.room+"/enter", "")
}

// send makes one request on the worker's own connection. A zero status means
// no reply came.
func (t *target) send(ctx context.Context, st *workerState, r request, wantBody bool) (rawReply, error) {
	if t.raw {
		return st.conn.do(r.raw, t.to, wantBody)
	}
	status, body, h, err := t.do(ctx, r.method, t.base.Scheme+"://"+t.base.Host+r.path, r.cookie, wantBody)
	rep := rawReply{status: status, body: body}
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "wr_vid" {
			rep.vid = c.Value
		}
	}
	return rep, err
}

// do sends one request with net/http and returns its status, or 0 with the
// error when no reply came; the body is read whole so the connection is reused.
func (t *target) do(ctx context.Context, method, u, cookie string, keep bool) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, t.to)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loadgen: build request: %w", err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", "wr_vid="+cookie)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loadgen: %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	var data []byte
	if keep {
		data, err = io.ReadAll(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loadgen: read %s %s: %w", method, u, err)
	}
	return resp.StatusCode, data, resp.Header, nil
}

// enterVisitor enters with the request given (a new visitor when it has no
// cookie) and returns who it is now.
func (t *target) enterVisitor(ctx context.Context, st *workerState, r request) (int, visitor, error) {
	rep, err := t.send(ctx, st, r, true)
	if err != nil || rep.status != http.StatusOK {
		return rep.status, visitor{}, err
	}
	var tk struct {
		Ticket string `json:"ticket"`
	}
	if err := json.Unmarshal(rep.body, &tk); err != nil {
		return rep.status, visitor{}, fmt.Errorf("loadgen: decode enter reply: %w", err)
	}
	v := visitor{ticket: tk.Ticket, cookie: r.cookie}
	if rep.vid != "" {
		v.cookie = rep.vid
	}
	if v.ticket == "" || v.cookie == "" {
		return rep.status, visitor{}, errors.New("loadgen: enter reply without ticket or wr_vid cookie")
	}
	v.status = t.request(http.MethodGet, "/api/rooms/"+t.room+"/tickets/"+v.ticket, v.cookie)
	return rep.status, v, nil
}

// enterMany enters n new visitors: n requests at most, each within --timeout.
func (t *target) enterMany(ctx context.Context, n int) ([]visitor, error) {
	out := make([]visitor, n)
	states := t.workers(min(n, 200))
	defer closeAll(states)
	var firstErr atomic.Value
	enter := t.enterRequest()
	phase(ctx, states, int64(n), maxDuration, 0, func(_ int, i int64, st *workerState) {
		status, v, err := t.enterVisitor(ctx, st, enter)
		st.rec.add("setup", time.Since(st.sched), status)
		if err != nil {
			firstErr.CompareAndSwap(nil, err)
		}
		out[i] = v
	})
	got := out[:0]
	for _, v := range out {
		if v.ticket != "" {
			got = append(got, v)
		}
	}
	if len(got) < n {
		err, _ := firstErr.Load().(error)
		return nil, fmt.Errorf("loadgen: setup: entered %d of %d visitors: %v", len(got), n, err)
	}
	return got, nil
}

// workload returns what one request of the measured phases is.
func (t *target) workload(ctx context.Context, cfg config, visitors []visitor) func(w int, i int64, st *workerState) {
	timed := func(st *workerState, op string, r request) {
		rep, _ := t.send(ctx, st, r, false)
		st.rec.add(op, time.Since(st.sched), rep.status)
	}
	enter := t.enterRequest()
	switch cfg.Mode {
	case "status":
		return func(_ int, i int64, st *workerState) {
			timed(st, "status", visitors[i%int64(len(visitors))].status)
		}
	case "mixed":
		return func(_ int, _ int64, st *workerState) {
			if st.left > 0 && st.current.ticket != "" {
				st.left--
				timed(st, "status", st.current.status)
				return
			}
			status, v, _ := t.enterVisitor(ctx, st, enter)
			st.rec.add("enter", time.Since(st.sched), status)
			st.current, st.left = v, cfg.StatusEvery
		}
	default:
		if cfg.Solve {
			return func(_ int, _ int64, st *workerState) { t.enterSolving(ctx, st, cfg.SolveCores) }
		}
		if cfg.Fresh {
			return func(_ int, _ int64, st *workerState) { timed(st, "enter", enter) }
		}
		reenter := make([]request, len(visitors))
		for i, v := range visitors {
			reenter[i] = t.request(http.MethodPost, "/api/rooms/"+t.room+"/enter", v.cookie)
		}
		return func(w int, _ int64, st *workerState) { timed(st, "enter", reenter[w%len(reenter)]) }
	}
}

// putRoom creates the room with the configured pace, deleting it first on --reset.
func (t *target) putRoom(ctx context.Context, reset bool) error {
	if reset {
		status, _, err := t.adminDo(ctx, http.MethodDelete, "", nil)
		if err != nil {
			return err
		}
		if status != http.StatusNoContent && status != http.StatusNotFound {
			return fmt.Errorf("loadgen: delete room: status %d", status)
		}
	}
	status, data, err := t.adminDo(ctx, http.MethodPut, "", strings.NewReader(t.set))
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return fmt.Errorf("loadgen: put room: status %d: %s", status, strings.TrimSpace(string(data)))
	}
	return nil
}

// waiting reads the room's waiting count from the admin stats.
func (t *target) waiting(ctx context.Context) (int64, error) {
	status, data, err := t.adminDo(ctx, http.MethodGet, "/stats", nil)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("loadgen: room stats: status %d", status)
	}
	var st struct {
		Waiting int64 `json:"waiting"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return 0, fmt.Errorf("loadgen: decode room stats: %w", err)
	}
	return st.Waiting, nil
}

func (t *target) adminDo(ctx context.Context, method, suffix string, body io.Reader) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.to)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, t.url("/admin/api/rooms/"+t.room+suffix), body)
	if err != nil {
		return 0, nil, fmt.Errorf("loadgen: build admin request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+t.admin)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("loadgen: admin %s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("loadgen: read admin reply: %w", err)
	}
	return resp.StatusCode, data, nil
}
