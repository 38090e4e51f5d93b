package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/server"
)

// storeWatch counts what the server asks Redis: per-waiter status reads
// (the status script, alone or in StatusMany's pipeline) and the open
// connections' sign of life: the present script's snapshot (KEYS q, pr and
// the bitmap; ARGV server, time, lowest seq, bitmap) and the alive
// script's marks of those that left (first KEY seen; ARGV the time and the
// members), remembering the last time written for each ticket's seq.
type storeWatch struct {
	mu      sync.Mutex
	reads   statusReads
	aliveAt map[string]float64 // ticket's seq -> last sign of life (ms) written by a snapshot or a mark
	marked  map[string]float64 // ticket's seq -> last mark (alive script)
}

func (w *storeWatch) see(cmds ...redis.Cmder) {
	w.reads.count(cmds...)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cmds {
		a := c.Args()
		name := strings.ToLower(fmt.Sprint(a[0]))
		if name != "evalsha" && name != "eval" && name != "fcall" || len(a) < 5 {
			continue
		}
		k1, k2 := fmt.Sprint(a[3]), fmt.Sprint(a[4])
		switch {
		case strings.HasSuffix(k1, ":seen"):
			nkeys, err := strconv.Atoi(fmt.Sprint(a[2]))
			if err != nil || len(a) <= 3+nkeys {
				continue
			}
			at, err := strconv.ParseFloat(fmt.Sprint(a[3+nkeys]), 64)
			if err != nil {
				continue
			}
			for _, m := range a[4+nkeys:] {
				w.aliveAt[fmt.Sprint(m)] = at
				w.marked[fmt.Sprint(m)] = at
			}
		case strings.HasSuffix(k1, ":q") && strings.HasSuffix(k2, ":pr") && len(a) == 10:
			at, err1 := strconv.ParseFloat(fmt.Sprint(a[7]), 64)
			lo, err2 := strconv.ParseInt(fmt.Sprint(a[8]), 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			bits := fmt.Sprint(a[9])
			for i := range 8 * len(bits) {
				if bits[i/8]&(0x80>>(i%8)) != 0 {
					w.aliveAt[strconv.FormatInt(lo+int64(i), 10)] = at
				}
			}
		}
	}
}

// seqOf is the seq a ticket id names (its first 12 digits).
func seqOf(id string) string {
	n, _ := strconv.ParseInt(id[:12], 10, 64)
	return strconv.FormatInt(n, 10)
}

// seeHook is a go-redis hook that shows each command, alone or in a
// pipeline, to a watcher once it has been answered.
type seeHook func(...redis.Cmder)

func (h seeHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h seeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		err := next(ctx, c)
		h(c)
		return err
	}
}
func (h seeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h(cmds...)
		return err
	}
}

func (w *storeWatch) state(id string) (reads int, alive float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reads.get(), w.aliveAt[seqOf(id)]
}

// mark is the last time the alive script marked the ticket (0: never).
func (w *storeWatch) mark(id string) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.marked[seqOf(id)]
}

// await polls cond until it holds, failing after a generous bound.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestOpenSocketsKeepTheirPlaceWithoutReads: a waiter with an open
// WebSocket gets its positions from the server's view of the line and its
// sign of life from the server's snapshot of its open connections, with
// no status read of its ticket: it is never abandoned. A waiter whose
// socket closed is marked seen as it leaves the snapshot, abandoned after
// the timeout from then, and the one behind it hears its new position,
// still without a read.
func TestOpenSocketsKeepTheirPlaceWithoutReads(t *testing.T) {
	t.Parallel()
	w := &storeWatch{aliveAt: map[string]float64{}, marked: map[string]float64{}}
	rdb := redistest.Shared(t).Client(t)
	rdb.AddHook(seeHook(w.see))
	// The sign of life every 20 ms rather than 5 s: the test waits on it.
	e := newEnvWith(t, rdb, func(c *server.Config) { c.PresentEvery = 20 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	go func() { _ = e.srv.Run(ctx) }()
	e.putRoom("sale", `{"paused": true, "abandon_after_s": 20}`)

	gone, stays := e.browser(), e.browser()
	goneID := e.do(gone, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	staysID := e.do(stays, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	dial := func(b *http.Client, id string) *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
			&websocket.DialOptions{HTTPHeader: cookieHeader(e, b)})
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	wsGone := dial(gone, goneID)
	if m := readTicket(t, ctx, wsGone); m["position"] != 1.0 {
		t.Fatalf("first in line: %v", m)
	}
	ws := dial(stays, staysID)
	defer ws.CloseNow()
	if m := readTicket(t, ctx, ws); m["position"] != 2.0 {
		t.Fatalf("second in line: %v", m)
	}
	at := func() float64 { return float64(e.clock.Now().UnixMilli()) }
	await(t, "a snapshot of both sockets", func() bool {
		_, a := w.state(goneID)
		_, b := w.state(staysID)
		return a == at() && b == at()
	})
	_ = wsGone.Close(websocket.StatusNormalClosure, "")
	await(t, "the closed socket's mark", func() bool { return w.mark(goneID) == at() })

	// Time passes on the line's clock; the open socket's sign of life follows.
	e.clock.Advance(15 * time.Second)
	want := at()
	await(t, "the first batched sign of life", func() bool { _, a := w.state(staysID); return a == want })
	readsBefore, _ := w.state(staysID)

	e.clock.Advance(15 * time.Second) // 30 s: past abandon_after_s for the closed one
	want = at()
	await(t, "the second batched sign of life", func() bool { _, a := w.state(staysID); return a == want })
	s, _ := e.line.Settings(ctx, "sale")
	s.Paused = false
	s.Capacity = 0 // admit nobody: this tick only abandons
	if _, err := e.line.Tick(ctx, "sale", &s); err != nil {
		t.Fatal(err)
	}
	// The closed one's place is gone: the open one moves up, from the log.
	for {
		m := readTicket(t, ctx, ws)
		if m["state"] != "waiting" {
			t.Fatalf("open socket: %v", m)
		}
		if m["position"] == 1.0 {
			break
		}
	}
	if reads, _ := w.state(staysID); reads != readsBefore {
		t.Fatalf("%d status reads while the open socket waited, want none", reads-readsBefore)
	}
	st, _ := e.line.Stats(ctx, "sale", e.clock.Now())
	if st.Waiting != 1 || st.AbandonedTotal != 1 {
		t.Fatalf("waiting %d, abandoned %d: want the open one waiting, the closed one abandoned", st.Waiting, st.AbandonedTotal)
	}
}

// statusReads counts the status script's runs (one ticket read), alone or
// in StatusMany's pipeline: an FCALL, EVAL or EVALSHA whose keys begin with the
// room's tickets, line and seen keys. (An EVALSHA refused with NOSCRIPT,
// followed by the EVAL of the same read, counts twice: load the script first.)
type statusReads struct {
	mu sync.Mutex
	n  int
}

func (w *statusReads) count(cmds ...redis.Cmder) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cmds {
		a := c.Args()
		name := strings.ToLower(fmt.Sprint(a[0]))
		if (name == "evalsha" || name == "eval" || name == "fcall") && len(a) > 5 &&
			strings.HasSuffix(fmt.Sprint(a[3]), ":tickets") && strings.HasSuffix(fmt.Sprint(a[4]), ":q") &&
			strings.HasSuffix(fmt.Sprint(a[5]), ":seen") {
			w.n++
		}
	}
}

// runWithStatusReads runs a server on the shared Redis whose status reads
// w counts, until the test ends (at most 90 s).
func runWithStatusReads(t *testing.T) (*statusReads, *env, context.Context) {
	t.Helper()
	w := &statusReads{}
	rdb := redistest.Shared(t).Client(t)
	rdb.AddHook(seeHook(w.count))
	e := newEnvWith(t, rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	go func() { _ = e.srv.Run(ctx) }()
	return w, e, ctx
}

func (w *statusReads) get() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// TestAConnectionsFirstReadIsNotRepeated: opening a WebSocket reads the
// waiter's ticket once, for the first message; the hub's first update of
// it comes at its tier slot from the server's view of the line, not from a
// second read right after the first (two reads per connection doubled the
// store's work for every waiter that connects or reconnects).
func TestAConnectionsFirstReadIsNotRepeated(t *testing.T) {
	t.Parallel()
	w, e, ctx := runWithStatusReads(t)
	e.putRoom("sale", `{"paused": true, "tiers": [{"max_position": null, "interval_ms": 500}]}`)

	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "") // loads the status script
	before := w.get()
	dial := func() *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
			&websocket.DialOptions{HTTPHeader: cookieHeader(e, b)})
		if err != nil {
			t.Fatal(err)
		}
		if m := readTicket(t, ctx, ws); m["position"] != 1.0 {
			t.Fatalf("first message: %v", m)
		}
		return ws
	}
	// Right after its enter on this server: the enter's answer, no read;
	// the second connection's first message is read.
	_ = dial().Close(websocket.StatusNormalClosure, "")
	fetches := e.srv.PushStats().Fetches
	ws := dial()
	defer ws.CloseNow()
	// Three of the hub's fetches of the ticket (every 500 ms), then count.
	await(t, "three updates of the open socket", func() bool { return e.srv.PushStats().Fetches >= fetches+3 })
	if got := w.get() - before; got != 1 {
		t.Fatalf("%d status reads for two connections and three updates, want 1 (the second's first message)", got)
	}
}

// TestAConnectionRightAfterItsEnterIsNotRead: a page opens its connection
// right after its enter; the server that entered the ticket answers the
// first message from the enter, without a status read, and its updates
// from the view. Another visitor naming that ticket is refused as before,
// and an admission heard between the enter and the connection is read
// from the store.
func TestAConnectionRightAfterItsEnterIsNotRead(t *testing.T) {
	w, e, ctx := runWithStatusReads(t)
	// One update a minute: within the test a socket hears of the admission
	// only from its event, so the second's "admitted" says this server's
	// view has heard it too (the view takes an event before the hub). A
	// tier update could read the store first (a busy clean-clone run).
	e.putRoom("sale", `{"paused": true, "abandon_after_s": 120, "tiers": [{"max_position": null, "interval_ms": 60000}]}`)
	url := func(id string) string {
		return "ws" + strings.TrimPrefix(e.url, "http") + "/api/rooms/sale/tickets/" + id + "/ws"
	}

	first, second, thief := e.browser(), e.browser(), e.browser()
	e.do(first, "POST", "/api/rooms/sale/enter", "")
	b := e.do(second, "POST", "/api/rooms/sale/enter", "").body
	id := b["ticket"].(string)
	// Another visitor with the ticket's id: refused, whatever was kept.
	if _, resp, err := websocket.Dial(ctx, url(id), &websocket.DialOptions{HTTPHeader: cookieHeader(e, thief)}); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another visitor's connection to the ticket: %v %v, want 404", resp, err)
	}
	before := w.get()
	ws, _, err := websocket.Dial(ctx, url(id), &websocket.DialOptions{HTTPHeader: cookieHeader(e, second)})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if m := readTicket(t, ctx, ws); m["state"] != "waiting" || m["position"] != 2.0 || m["waiting"] != 2.0 {
		t.Fatalf("first message: %v, want the enter's: waiting, 2nd of 2", m)
	}
	if got := w.get() - before; got != 0 {
		t.Fatalf("%d status reads for a connection right after its enter, want none", got)
	}

	// Admitted between its enter and its connection: read, and admitted.
	third := e.browser()
	id3 := e.do(third, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	s, _ := e.line.Settings(ctx, "sale")
	s.Paused, s.BatchSize = false, 3
	if _, err := e.line.Tick(ctx, "sale", &s); err != nil {
		t.Fatal(err)
	}
	await(t, "the admission heard", func() bool {
		m := readTicket(t, ctx, ws)
		return m["state"] == "admitted"
	})
	before = w.get()
	ws3, _, err := websocket.Dial(ctx, url(id3), &websocket.DialOptions{HTTPHeader: cookieHeader(e, third)})
	if err != nil {
		t.Fatal(err)
	}
	defer ws3.CloseNow()
	if m := readTicket(t, ctx, ws3); m["state"] != "admitted" {
		t.Fatalf("first message of a ticket admitted after its enter: %v", m)
	}
	if got := w.get() - before; got != 1 {
		t.Fatalf("%d status reads for a ticket admitted since its enter, want 1", got)
	}
}

// TestAnAdmissionHeardIsShownWithoutARead: the admission's event carries
// the tickets' times, so the server shows a connected waiter admitted, its
// entry token signed, without reading the ticket; what it shows is what a
// read of the ticket says.
func TestAnAdmissionHeardIsShownWithoutARead(t *testing.T) {
	w, e, ctx := runWithStatusReads(t)
	e.putRoom("sale", `{"paused": true, "jitter_ms": 3000}`)

	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
		&websocket.DialOptions{HTTPHeader: cookieHeader(e, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if m := readTicket(t, ctx, ws); m["state"] != "waiting" {
		t.Fatalf("first message: %v", m)
	}
	before := w.get()
	s, _ := e.line.Settings(ctx, "sale")
	s.Paused = false
	if r, err := e.line.Tick(ctx, "sale", &s); err != nil || len(r.Admitted) != 1 {
		t.Fatalf("tick: %+v %v", r, err)
	}
	var m map[string]any
	await(t, "the admission", func() bool {
		m = readTicket(t, ctx, ws)
		return m["state"] == "admitted"
	})
	if got := w.get() - before; got != 0 {
		t.Fatalf("%d status reads to show an admission heard, want none", got)
	}
	read := e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "").body
	for _, f := range []string{"orderable_at", "token", "entered_at"} {
		if m[f] == nil || fmt.Sprint(m[f]) != fmt.Sprint(read[f]) {
			t.Errorf("%s: pushed %v, read %v", f, m[f], read[f])
		}
	}
}
