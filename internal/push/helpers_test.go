package push

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"
	"github.com/waitroom/waitroom/internal/vocab"
)

// wait bounds every blocking step of a test; it is a failure timeout, never
// a way to synchronise.
const wait = 5 * time.Second

func firstPayload(ticket string) string { return fmt.Sprintf(`{"first":%q}`, ticket) }

type fetchCall struct {
	room    string
	tickets []string
	at      time.Time
}

// fakeFetcher answers with fn and records each call. n counts how often a
// ticket was fetched, starting at 1.
type fakeFetcher struct {
	clock  clockwork.Clock
	mu     sync.Mutex
	fn     func(room, ticket string, n int, now time.Time) Update
	counts map[string]int
	calls  []fetchCall
}

func (f *fakeFetcher) Fetch(_ context.Context, room string, tickets []string) ([]Update, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.Now()
	f.calls = append(f.calls, fetchCall{room: room, tickets: slices.Clone(tickets), at: now})
	out := make([]Update, len(tickets))
	for i, id := range tickets {
		f.counts[id]++
		out[i] = f.fn(room, id, f.counts[id], now)
		out[i].Ticket = id
	}
	return out, nil
}

func (f *fakeFetcher) setFn(fn func(room, ticket string, n int, now time.Time) Update) {
	f.mu.Lock()
	f.fn = fn
	f.mu.Unlock()
}

func (f *fakeFetcher) takeCalls() []fetchCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// waiting answers a constant waiting payload equal to the first message, so
// nothing is sent unless a test changes fn.
func waiting(interval time.Duration) func(string, string, int, time.Time) Update {
	return func(_, id string, _ int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Interval: interval, Payload: []byte(firstPayload(id))}
	}
}

func admitted(_, id string, _ int, _ time.Time) Update {
	return Update{State: vocab.StateAdmitted, Payload: []byte(fmt.Sprintf(`{"admitted":%q}`, id))}
}

type env struct {
	t      *testing.T
	clock  *clockwork.FakeClock
	hub    *Hub
	f      *fakeFetcher
	srv    *httptest.Server
	ticks  chan struct{}
	served chan error // how each connection ended
	// first, when set, makes each connection's first message (default: a
	// payload alone); set it before dialing.
	first func(ticket string) First
}

// newEnv starts a hub on a fake clock behind a real HTTP server. setup, if
// not nil, runs before the hub's loop starts.
func newEnv(t *testing.T, o Options, fn func(string, string, int, time.Time) Update, setup func(*Hub)) *env {
	t.Helper()
	clock := clockwork.NewFakeClock()
	o.Clock = clock
	o.Logger = slog.New(slog.DiscardHandler)
	f := &fakeFetcher{clock: clock, fn: fn, counts: make(map[string]int)}
	h := NewHub(f, o)
	e := &env{t: t, clock: clock, hub: h, f: f, ticks: make(chan struct{}, 1), served: make(chan error, 64)}
	h.onTick = func() {
		select {
		case e.ticks <- struct{}{}:
		default:
		}
	}
	if setup != nil {
		setup(h)
	}

	// served gets what a connection ended with: ServeWS's or ServeSSE's
	// error, or else what the Hold learnt when the connection was over.
	serve := func(fn func(http.ResponseWriter, *http.Request, string, string, First) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			id := r.PathValue("ticket")
			ctx, finish := Hold(r.Context(), e.done)
			first := First{Payload: []byte(firstPayload(id))}
			if e.first != nil {
				first = e.first(id)
			}
			if err := fn(w, r.WithContext(ctx), r.PathValue("room"), id, first); err != nil {
				e.done(err)
				return
			}
			finish()
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/{room}/{ticket}", serve(h.ServeWS))
	mux.HandleFunc("/sse/{room}/{ticket}", serve(h.ServeSSE))
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	t.Cleanup(h.Close) // before srv.Close: open streams would hold it up

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := h.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-stopped })

	bctx, bcancel := context.WithTimeout(ctx, wait)
	defer bcancel()
	if err := clock.BlockUntilContext(bctx, 1); err != nil {
		t.Fatalf("hub ticker never started: %v", err)
	}
	return e
}

func (e *env) done(err error) {
	select {
	case e.served <- err:
	default:
	}
}

// step advances the clock by one Tick and waits until that tick's fetches
// were applied.
func (e *env) step() {
	e.t.Helper()
	select {
	case <-e.ticks: // stale signal from an Advance that was not a step
	default:
	}
	e.clock.Advance(e.hub.o.Tick)
	select {
	case <-e.ticks:
	case <-time.After(wait):
		e.t.Fatal("tick not processed")
	}
}

func (e *env) servedResult() error {
	e.t.Helper()
	select {
	case err := <-e.served:
		return err
	case <-time.After(wait):
		e.t.Fatal("handler did not return")
		return nil
	}
}

// wsClient reads continuously, as a browser does, so pings and close frames
// are answered.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	msgs chan string
	end  chan error // receives the read error once
}

func (e *env) dialWS(room, ticket string, opts *websocket.DialOptions) *wsClient {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/ws/" + room + "/" + ticket
	conn, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	c := &wsClient{t: e.t, conn: conn, msgs: make(chan string, 64), end: make(chan error, 1)}
	e.t.Cleanup(func() { conn.CloseNow() })
	go func() {
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				c.end <- err
				return
			}
			c.msgs <- string(b)
		}
	}()
	return c
}

func (c *wsClient) next() string {
	c.t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case err := <-c.end:
		c.t.Fatalf("ws ended while waiting for a message: %v", err)
	case <-time.After(wait):
		c.t.Fatal("no ws message")
	}
	return ""
}

func (c *wsClient) closed() websocket.StatusCode {
	c.t.Helper()
	for {
		select {
		case <-c.msgs:
		case err := <-c.end:
			return websocket.CloseStatus(err)
		case <-time.After(wait):
			c.t.Fatal("ws not closed")
			return 0
		}
	}
}

type sseClient struct {
	t        *testing.T
	resp     *http.Response
	events   chan string // data of each event
	comments chan string
	eof      chan struct{}
}

func (e *env) dialSSE(room, ticket string) *sseClient {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/sse/"+room+"/"+ticket, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("sse: %v", err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("sse status %d", resp.StatusCode)
	}
	c := &sseClient{t: e.t, resp: resp, events: make(chan string, 64), comments: make(chan string, 64), eof: make(chan struct{})}
	go func() {
		defer close(c.eof)
		sc := bufio.NewScanner(resp.Body)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != nil {
					c.events <- strings.Join(data, "\n")
					data = nil
				}
			case strings.HasPrefix(line, ":"):
				c.comments <- line
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return c
}

func (c *sseClient) next() string {
	c.t.Helper()
	select {
	case m := <-c.events:
		return m
	case <-c.eof:
		c.t.Fatal("sse ended while waiting for an event")
	case <-time.After(wait):
		c.t.Fatal("no sse event")
	}
	return ""
}

func (c *sseClient) ended() {
	c.t.Helper()
	select {
	case <-c.eof:
	case <-time.After(wait):
		c.t.Fatal("sse stream not ended")
	}
}

// blockingTransport never finishes a write until closed: a client that
// stopped reading.
type blockingTransport struct {
	writing chan []byte
	code    chan websocket.StatusCode
	closed  chan struct{}
}

func newBlockingTransport() *blockingTransport {
	return &blockingTransport{writing: make(chan []byte, 64), code: make(chan websocket.StatusCode, 1), closed: make(chan struct{})}
}

func (t *blockingTransport) Name() string { return "fake" }

func (t *blockingTransport) WriteMessage(ctx context.Context, msg []byte) error {
	t.writing <- msg
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.closed:
		return errors.New("closed")
	}
}

func (t *blockingTransport) Ping(context.Context) error { return nil }

func (t *blockingTransport) Close(code websocket.StatusCode, _ string) error {
	t.code <- code
	close(t.closed)
	return nil
}
