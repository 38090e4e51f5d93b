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

	"github.com/waitroom/waitroom/internal/redistest"
)

// storeWatch counts what the server asks Redis: per-waiter status reads
// (the status script, alone or in StatusMany's pipeline) and the batched
// sign of life (the alive script: its first KEY is seen, its ARGV the time
// and the members), remembering the last time written for each ticket.
type storeWatch struct {
	mu      sync.Mutex
	reads   statusReads
	aliveAt map[string]float64 // ticket -> last sign of life (ms) written by a batched call
	batches int
}

func (w *storeWatch) see(cmds ...redis.Cmder) {
	w.reads.count(cmds...)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range cmds {
		a := c.Args()
		name := strings.ToLower(fmt.Sprint(a[0]))
		if name != "evalsha" && name != "eval" || len(a) < 4 || !strings.HasSuffix(fmt.Sprint(a[3]), ":seen") {
			continue
		}
		nkeys, err := strconv.Atoi(fmt.Sprint(a[2]))
		if err != nil || len(a) <= 3+nkeys {
			continue
		}
		w.batches++
		at, err := strconv.ParseFloat(fmt.Sprint(a[3+nkeys]), 64)
		if err != nil {
			continue
		}
		for _, m := range a[4+nkeys:] {
			w.aliveAt[fmt.Sprint(m)] = at
		}
	}
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
	return w.reads.get(), w.aliveAt[id]
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
// sign of life from the server's batched write, with no status read of its
// ticket: it is never abandoned. A waiter whose socket closed is abandoned
// after the timeout, and the one behind it hears its new position, still
// without a read.
func TestOpenSocketsKeepTheirPlaceWithoutReads(t *testing.T) {
	w := &storeWatch{aliveAt: map[string]float64{}}
	rdb := redistest.Shared(t).Client(t)
	rdb.AddHook(seeHook(w.see))
	e := newEnvWith(t, rdb)
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
	_ = wsGone.Close(websocket.StatusNormalClosure, "")
	ws := dial(stays, staysID)
	defer ws.CloseNow()
	if m := readTicket(t, ctx, ws); m["position"] != 2.0 {
		t.Fatalf("second in line: %v", m)
	}

	// Time passes on the line's clock; the open socket's sign of life follows.
	at := func() float64 { return float64(e.clock.Now().UnixMilli()) }
	e.clock.Advance(15 * time.Second)
	want := at()
	await(t, "the first batched sign of life", func() bool { _, a := w.state(staysID); return a == want })
	readsBefore, _ := w.state(staysID)

	e.clock.Advance(15 * time.Second) // 30 s: past abandon_after_s for the closed one
	want = at()
	await(t, "the second batched sign of life", func() bool { _, a := w.state(staysID); return a == want })
	s, _ := e.line.Room(ctx, "sale")
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
// in StatusMany's pipeline: an FCALL, EVAL or EVALSHA whose keys begin with
// the room's tickets, line and seen keys. (An EVALSHA refused with NOSCRIPT,
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
		if (name == "fcall" || name == "evalsha" || name == "eval") && len(a) > 5 &&
			strings.HasSuffix(fmt.Sprint(a[3]), ":tickets") && strings.HasSuffix(fmt.Sprint(a[4]), ":q") &&
			strings.HasSuffix(fmt.Sprint(a[5]), ":seen") {
			w.n++
		}
	}
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
	w := &statusReads{}
	rdb := redistest.Shared(t).Client(t)
	rdb.AddHook(seeHook(w.count))
	e := newEnvWith(t, rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	go func() { _ = e.srv.Run(ctx) }()
	e.putRoom("sale", `{"paused": true, "tiers": [{"max_position": null, "interval_ms": 500}]}`)

	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "") // loads the status script
	before := w.get()
	fetches := e.srv.PushStats().Fetches
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
		&websocket.DialOptions{HTTPHeader: cookieHeader(e, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if m := readTicket(t, ctx, ws); m["position"] != 1.0 {
		t.Fatalf("first message: %v", m)
	}
	// Three of the hub's fetches of the ticket (every 500 ms), then count.
	await(t, "three updates of the open socket", func() bool { return e.srv.PushStats().Fetches >= fetches+3 })
	if got := w.get() - before; got != 1 {
		t.Fatalf("%d status reads for one connection and three updates, want 1 (the first message's)", got)
	}
}
