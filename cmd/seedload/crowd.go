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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/vocab"
)

// How a crowd's waiters learn they are admitted.
const (
	crowdPoll = "poll" // GET the ticket every --poll-every
	crowdWS   = "ws"   // hold the ticket's WebSocket
)

var crowdModes = []string{crowdPoll, crowdWS}

// crowdConfig is a peer-style flash crowd: visitors arrive in groups at a
// fixed pace into a room without proof of work that admits at its own pace,
// and each waits by polling or on a WebSocket until it is admitted.
type crowdConfig struct {
	common
	Modes       []string
	Arrive      int           // visitors entering together
	ArriveEvery time.Duration // between groups
	PollEvery   time.Duration
	Batch       int64
	Interval    time.Duration
	RunLimit    time.Duration // most time a mode may take, entering included
	Sources     int           // client source addresses, counting up from SourceFirst
	SourceFirst net.IP
	RedisAddr   string
	ServerPID   int
}

func parseCrowd(args []string, stderr io.Writer) (crowdConfig, error) {
	var c crowdConfig
	var modes, first string
	fs := flag.NewFlagSet("seedload crowd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.register(fs, "crowd", 2000)
	fs.StringVar(&modes, "modes", strings.Join(crowdModes, ","), "modes to run, in order: "+strings.Join(crowdModes, ", "))
	fs.IntVar(&c.Arrive, "arrive", 50, "visitors entering together")
	fs.DurationVar(&c.ArriveEvery, "arrive-every", 2*time.Second, "time between groups of arrivals")
	fs.DurationVar(&c.PollEvery, "poll-every", time.Second, "poll mode: time between a waiter's status requests")
	fs.Int64Var(&c.Batch, "batch-size", 20, "the room's pace: admitted per tick")
	fs.DurationVar(&c.Interval, "batch-interval", time.Second, "the room's tick")
	fs.DurationVar(&c.RunLimit, "run-timeout", 5*time.Minute, "most time one mode may take until all are admitted")
	fs.IntVar(&c.Sources, "sources", 1, "client source addresses: --source-first and the next ones (1: the system's choice)")
	fs.StringVar(&first, "source-first", "127.0.0.1", "first client source address (loopback)")
	fs.StringVar(&c.RedisAddr, "redis-addr", "", "waitroom's Redis (loopback host:port): INFO commandstats and cpu are read before and after each mode")
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
	if c.Modes, err = parseModes(modes, crowdModes); err != nil {
		return c, err
	}
	c.SourceFirst = net.ParseIP(first).To4()
	switch {
	case c.Arrive < 1 || c.Arrive > 1000 || c.ArriveEvery < 10*time.Millisecond || c.ArriveEvery > time.Minute:
		return c, errors.New("--arrive, --arrive-every: want 1..1000 every 10ms..1m")
	case c.PollEvery < 100*time.Millisecond || c.PollEvery > time.Minute:
		return c, errors.New("--poll-every: want 100ms..1m")
	case c.Batch < 1 || c.Batch > 10_000 || c.Interval < 50*time.Millisecond || c.Interval > time.Minute:
		return c, errors.New("--batch-size, --batch-interval: want 1..10000 every 50ms..1m")
	case c.RunLimit <= 0 || c.RunLimit > 2*maxWindow:
		return c, fmt.Errorf("--run-timeout: want (0, %s]", 2*maxWindow)
	case c.SourceFirst == nil || !c.SourceFirst.IsLoopback():
		return c, fmt.Errorf("--source-first %q: want a loopback IPv4 address", first)
	case c.Sources < 1 || int(c.SourceFirst[3])+c.Sources-1 > 254:
		return c, errors.New("--sources: want 1.. as many as fit after --source-first in its /24")
	}
	if c.RedisAddr != "" {
		if err := checkLoopbackAddr(c.RedisAddr); err != nil {
			return c, fmt.Errorf("--redis-addr: %w", err)
		}
	}
	return c, nil
}

// crowdVisitor is what one visitor saw, in client time.
type crowdVisitor struct {
	EnterStart, EnterDone time.Time
	// LastWaiting is when the last answer that said waiting was asked for
	// (poll) or received (ws); zero if the visitor was never seen waiting.
	LastWaiting time.Time
	Admitted    time.Time // when the answer saying admitted arrived; zero if never
}

// fifoInversions counts the pairs a, b where a's enter was answered before
// b's was sent, yet b was heard admitted before a was last seen waiting:
// pairs admitted out of entry order for certain, whatever the polls'
// phase. A visitor never admitted counts as still waiting at the end.
func fifoInversions(vs []crowdVisitor) int {
	n := 0
	for i := range vs {
		a := vs[i]
		if a.LastWaiting.IsZero() {
			continue
		}
		for j := range vs {
			b := vs[j]
			if a.EnterDone.Before(b.EnterStart) && !b.Admitted.IsZero() && b.Admitted.Before(a.LastWaiting) {
				n++
			}
		}
	}
	return n
}

// waiterSeconds is the time the visitors spent in line between their enter's
// answer and their admission heard (or the last time seen waiting).
func waiterSeconds(vs []crowdVisitor) float64 {
	sum := 0.0
	for _, v := range vs {
		end := maxTime(v.Admitted, v.LastWaiting)
		if !v.EnterDone.IsZero() && end.After(v.EnterDone) {
			sum += end.Sub(v.EnterDone).Seconds()
		}
	}
	return sum
}

// crowdCounts is one mode's tally of requests and errors.
type crowdCounts struct {
	enters, polls, sockets, http5xx atomic.Int64
	errs                            counts
}

// note counts a failed request by kind; HTTP 5xx also in http5xx.
func (k *crowdCounts) note(kind string, err error) {
	if strings.HasPrefix(err.Error(), "HTTP 5") {
		k.http5xx.Add(1)
	}
	k.errs.add(kind + ": " + err.Error())
}

// resources are the server side's counters at one moment.
type resources struct {
	redisCommands int64   // sum of INFO commandstats calls
	redisCPU      float64 // used_cpu_sys + used_cpu_user, seconds
	serverCPU     float64 // waitroom's user+system seconds
}

type crowdRun struct {
	Mode            string         `json:"mode"`
	Visitors        int            `json:"visitors"`
	Admitted        int            `json:"admitted"`
	AllAdmittedS    float64        `json:"all_admitted_s"` // first enter sent to last admission heard
	ArrivalsS       float64        `json:"arrivals_s"`     // first to last group sent
	PaceBoundS      float64        `json:"pace_bound_s"`   // visitors / the room's pace
	FIFOInversions  int            `json:"fifo_inversions"`
	Requests        int64          `json:"http_requests"` // enters + status polls + WebSocket upgrades
	Polls           int64          `json:"status_polls"`
	WaiterSeconds   float64        `json:"waiter_seconds"` // time in line, summed over the visitors
	RedisCommands   int64          `json:"redis_commands"`
	RedisPerWaiterS float64        `json:"redis_commands_per_waiter_second"`
	RedisPerRequest float64        `json:"redis_commands_per_request"`
	RedisCPUUS      float64        `json:"redis_cpu_us_per_request"`
	ServerCPUUS     float64        `json:"server_cpu_us_per_request"`
	HTTP5xx         int64          `json:"http_5xx"`
	Errors          map[string]int `json:"errors"`
}

type crowdReport struct {
	Runs []crowdRun `json:"runs"`
}

func runCrowd(ctx context.Context, c crowdConfig, log io.Writer) (*crowdReport, error) {
	a := newAPI(c.URL, c.AdminToken, 1000)
	dial := sourceDialer(c.Sources, c.SourceFirst)
	a.http.Transport.(*http.Transport).DialContext = dial
	ws := &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
	rep := &crowdReport{}
	for _, mode := range c.Modes {
		fmt.Fprintf(log, "seedload: crowd %s: %d visitors, %d every %s, admitted %d every %s\n",
			mode, c.Visitors, c.Arrive, c.ArriveEvery, c.Batch, c.Interval)
		r, err := crowdOnce(ctx, c, a, ws, mode)
		if r != nil {
			rep.Runs = append(rep.Runs, *r)
		}
		if err != nil {
			return rep, fmt.Errorf("%s: %w", mode, err)
		}
	}
	return rep, nil
}

// sourceDialer dials loopback only, from n source addresses in turn
// starting at first (n = 1: the system's choice).
func sourceDialer(n int, first net.IP) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var next atomic.Uint32
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: 10 * time.Second, Control: loopbackOnly}
		if n > 1 {
			i := next.Add(1) % uint32(n)
			d.LocalAddr = &net.TCPAddr{IP: net.IPv4(first[0], first[1], first[2], first[3]+byte(i))}
		}
		return d.DialContext(ctx, network, addr)
	}
}

func crowdOnce(ctx context.Context, c crowdConfig, a *api, ws *http.Client, mode string) (*crowdRun, error) {
	id := c.Room + "-" + mode
	if err := a.putRoom(ctx, id, room{Capacity: 1_000_000, BatchSize: c.Batch, BatchInterval: c.Interval.Milliseconds(),
		Title: "seedload crowd " + mode}); err != nil {
		return nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.deleteRoom(dctx, id)
	}()
	before, err := c.resources(ctx)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, c.RunLimit)
	defer cancel()
	vs := make([]crowdVisitor, c.Visitors)
	var k crowdCounts
	var wg sync.WaitGroup
	start := time.Now()
	var lastGroup time.Time
	tick := time.NewTicker(c.ArriveEvery)
	for i := 0; i < c.Visitors && rctx.Err() == nil; {
		lastGroup = time.Now()
		for g := 0; g < c.Arrive && i < c.Visitors; g, i = g+1, i+1 {
			wg.Add(1)
			go func(v *crowdVisitor) {
				defer wg.Done()
				crowdWait(rctx, c, a, ws, mode, id, v, &k)
			}(&vs[i])
		}
		if i < c.Visitors {
			select {
			case <-tick.C:
			case <-rctx.Done():
			}
		}
	}
	tick.Stop()
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	after, err := c.resources(ctx)
	if err != nil {
		return nil, err
	}
	run := &crowdRun{Mode: mode, Visitors: c.Visitors, ArrivalsS: lastGroup.Sub(start).Seconds(),
		PaceBoundS:     float64((int64(c.Visitors)+c.Batch-1)/c.Batch) * c.Interval.Seconds(),
		FIFOInversions: fifoInversions(vs), WaiterSeconds: waiterSeconds(vs), Polls: k.polls.Load(), HTTP5xx: k.http5xx.Load(), Errors: k.errs.snapshot()}
	var last time.Time
	for _, v := range vs {
		if !v.Admitted.IsZero() {
			run.Admitted++
			last = maxTime(last, v.Admitted)
		}
	}
	if run.Admitted > 0 {
		run.AllAdmittedS = last.Sub(start).Seconds()
	}
	run.Requests = k.enters.Load() + k.polls.Load() + k.sockets.Load()
	run.setPerRequest(before, after)
	if run.Admitted < run.Visitors {
		return run, fmt.Errorf("%d of %d visitors admitted within %s: %v", run.Admitted, run.Visitors, c.RunLimit, run.Errors)
	}
	return run, nil
}

// setPerRequest divides what the servers spent between two readings by the
// HTTP requests sent (the admitter's and followers' own work included).
func (r *crowdRun) setPerRequest(before, after resources) {
	r.RedisCommands = after.redisCommands - before.redisCommands
	if r.WaiterSeconds > 0 {
		r.RedisPerWaiterS = float64(r.RedisCommands) / r.WaiterSeconds
	}
	if r.Requests == 0 {
		return
	}
	n := float64(r.Requests)
	r.RedisPerRequest = float64(r.RedisCommands) / n
	r.RedisCPUUS = (after.redisCPU - before.redisCPU) * 1e6 / n
	r.ServerCPUUS = (after.serverCPU - before.serverCPU) * 1e6 / n
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// crowdWait enters one visitor (an enter refused for a 5xx or the
// transport is tried again, a few times, a second apart) and waits until it
// is admitted.
func crowdWait(ctx context.Context, c crowdConfig, a *api, ws *http.Client, mode, room string, v *crowdVisitor, k *crowdCounts) {
	var m ticketMsg
	var cookie string
	for try := 0; ; try++ {
		v.EnterStart = time.Now()
		var err error
		m, cookie, err = a.enter(ctx, room)
		k.enters.Add(1)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		k.note("enter", err)
		if try == 4 {
			return
		}
		sleepCtx(ctx, time.Second)
	}
	v.EnterDone = time.Now()
	if !crowdSaw(v, m, v.EnterStart, v.EnterDone) {
		k.errs.add("ended: " + string(m.State))
		return
	}
	if !v.Admitted.IsZero() {
		return
	}
	if mode == crowdWS {
		crowdSocket(ctx, a, ws, room, m.Ticket, cookie, v, k)
		return
	}
	u := a.base + "/api/rooms/" + url.PathEscape(room) + "/tickets/" + url.PathEscape(m.Ticket)
	var w waiters // its status request; its tallies are unused
	for next := v.EnterStart.Add(c.PollEvery); ; next = next.Add(c.PollEvery) {
		sleepCtx(ctx, time.Until(next))
		if ctx.Err() != nil {
			return
		}
		asked := time.Now()
		got, err := w.status(ctx, a, u, cookie)
		k.polls.Add(1)
		if err != nil {
			if ctx.Err() == nil {
				k.note("status", err)
			}
			continue
		}
		if !crowdSaw(v, got, asked, time.Now()) {
			k.errs.add("ended: " + string(got.State))
			return
		}
		if !v.Admitted.IsZero() {
			return
		}
	}
}

// crowdSaw records an answer asked at asked and received at got: whether
// the visitor is still in line (waiting or admitted).
func crowdSaw(v *crowdVisitor, m ticketMsg, asked, got time.Time) bool {
	switch m.State {
	case vocab.StateWaiting:
		v.LastWaiting = asked
		return true
	case vocab.StateAdmitted:
		v.Admitted = got
		return true
	}
	return false
}

// crowdSocket holds the ticket's WebSocket (the page's URL) until it says
// admitted.
func crowdSocket(ctx context.Context, a *api, ws *http.Client, room, ticket, cookie string, v *crowdVisitor, k *crowdCounts) {
	u := "ws" + strings.TrimPrefix(a.base, "http") + "/api/rooms/" + url.PathEscape(room) + "/tickets/" + url.PathEscape(ticket) + "/ws"
	for try := 0; try < 5 && ctx.Err() == nil; try++ {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: ws, HTTPHeader: http.Header{"Cookie": {cookie}}})
		cancel()
		k.sockets.Add(1)
		if err != nil {
			if resp != nil {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			if ctx.Err() == nil {
				k.note("ws dial", err)
			}
			sleepCtx(ctx, time.Second)
			continue
		}
		conn.SetReadLimit(64 << 10)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				if ctx.Err() == nil {
					k.errs.add("ws read")
				}
				break
			}
			var m ticketMsg
			if json.Unmarshal(data, &m) != nil {
				k.errs.add("ws: bad ticket JSON")
				continue
			}
			now := time.Now()
			if !crowdSaw(v, m, now, now) {
				k.errs.add("ended: " + string(m.State))
				conn.CloseNow()
				return
			}
			if !v.Admitted.IsZero() {
				conn.Close(websocket.StatusNormalClosure, "")
				return
			}
		}
		conn.CloseNow()
	}
}

func (c crowdConfig) resources(ctx context.Context) (resources, error) {
	var r resources
	if c.RedisAddr != "" {
		rdb := newRedis(c.RedisAddr)
		defer rdb.Close()
		info, err := rdb.Info(ctx, "commandstats", "cpu").Result()
		if err != nil {
			return r, fmt.Errorf("redis info: %w", err)
		}
		r.redisCommands, r.redisCPU = parseRedisInfo(info)
	}
	if c.ServerPID > 0 {
		var err error
		if r.serverCPU, err = processCPU(c.ServerPID); err != nil {
			return r, err
		}
	}
	return r, nil
}

func printCrowd(w io.Writer, c crowdConfig, r *crowdReport) {
	fmt.Fprintf(w, "Flash crowd: %d visitors, %d every %s, the room admitting %d every %s\n",
		c.Visitors, c.Arrive, c.ArriveEvery, c.Batch, c.Interval)
	fmt.Fprintf(w, "%-5s %9s %8s %8s %9s %9s %9s %10s %10s %10s %5s %9s %11s\n", "mode", "admitted", "all in s", "ideal s",
		"fifo inv", "requests", "polls", "redis/req", "redis µs", "server µs", "5xx", "waiter-s", "redis/wt-s")
	for _, run := range r.Runs {
		fmt.Fprintf(w, "%-5s %9d %8.1f %8.1f %9d %9d %9d %10.2f %10.1f %10.1f %5d %9.0f %11.2f\n", run.Mode, run.Admitted,
			run.AllAdmittedS, max(run.ArrivalsS, run.PaceBoundS), run.FIFOInversions, run.Requests, run.Polls,
			run.RedisPerRequest, run.RedisCPUUS, run.ServerCPUUS, run.HTTP5xx, run.WaiterSeconds, run.RedisPerWaiterS)
	}
	fmt.Fprintln(w, "  all in: first enter sent to last admission heard; ideal: the later of the last arrival and visitors/pace;")
	fmt.Fprintln(w, "  fifo inv: pairs heard admitted out of entry order; requests: enters + status polls + WebSocket upgrades;")
	fmt.Fprintln(w, "  redis/req: INFO commandstats calls per request; redis µs, server µs: CPU per request (background work included);")
	fmt.Fprintln(w, "  waiter-s: time in line summed over the visitors; redis/wt-s: Redis commands per waiter-second")
	for _, run := range r.Runs {
		if len(run.Errors) > 0 {
			fmt.Fprintf(w, "  %s: client errors %v\n", run.Mode, run.Errors)
		}
	}
}

func newRedis(addr string) *redis.Client { return redis.NewClient(&redis.Options{Addr: addr}) }

// parseRedisInfo reads INFO commandstats and cpu: the calls of every
// command (those a script makes included) and Redis's CPU seconds.
func parseRedisInfo(info string) (calls int64, cpu float64) {
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
			_, stats, _ := strings.Cut(rest, ":")
			for _, kv := range strings.Split(stats, ",") {
				if v, ok := strings.CutPrefix(kv, "calls="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					calls += n
				}
			}
			continue
		}
		for _, f := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(line, f); ok {
				s, _ := strconv.ParseFloat(v, 64)
				cpu += s
			}
		}
	}
	return calls, cpu
}
