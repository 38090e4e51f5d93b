package push

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/waitroom/waitroom/internal/vocab"
)

func TestWSPing(t *testing.T) {
	e := newEnv(t, Options{PingInterval: 5 * time.Second}, waiting(time.Second), nil)
	pinged := make(chan struct{}, 1)
	ws := e.dialWS("r", "T", &websocket.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool {
			select {
			case pinged <- struct{}{}:
			default:
			}
			return true
		},
	})
	ws.next() // written by the client's goroutine, after its ping ticker started

	e.clock.Advance(5 * time.Second)
	select {
	case <-pinged:
	case <-time.After(wait):
		t.Fatal("no ping")
	}
	// The pong came back: the connection is still served.
	e.f.setFn(admitted)
	e.hub.Notify("r", []string{"T"})
	if got := ws.next(); got != `{"admitted":"T"}` {
		t.Fatalf("got %s", got)
	}
}

func TestWSClientMessagesCloseConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		want websocket.StatusCode
	}{
		{"small", 8, websocket.StatusPolicyViolation},
		{"over read limit", 4 * wsReadLimit, websocket.StatusMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{}, waiting(time.Second), nil)
			ws := e.dialWS("r", "T", nil)
			ws.next()

			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if err := ws.conn.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", tc.size))); err != nil {
				t.Fatal(err)
			}
			if code := ws.closed(); code != tc.want {
				t.Errorf("close status %v, want %v", code, tc.want)
			}
			if err := e.servedResult(); err != nil {
				t.Errorf("ServeWS: %v", err)
			}
			if s := e.hub.Stats(); s.Connections["ws"] != 0 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}

// TestHijackKeepsSmallBuffersAndEarlyBytes: the WebSocket keeps bufio
// buffers of wsBuffer bytes, not net/http's 4 KB ones, and loses nothing
// the client sent right behind its request.
func TestHijackKeepsSmallBuffersAndEarlyBytes(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, brw, err := (&smallBuffers{ResponseWriter: w}).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		if r, w := brw.Reader.Size(), brw.Writer.Size(); r != wsBuffer || w != wsBuffer {
			t.Errorf("buffers %d and %d bytes, want %d", r, w, wsBuffer)
		}
		b := make([]byte, len("early bytes"))
		_, _ = io.ReadFull(brw, b)
		got <- string(b)
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\nearly bytes")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "early bytes" {
			t.Errorf("read %q after the hijack", s)
		}
	case <-time.After(wait):
		t.Fatal("handler did not read")
	}
}

// TestIdleConnectionsCostOneGoroutine: an idle WebSocket or SSE stream has
// one goroutine (its reader); no handler, writer or timer stays behind.
func TestIdleConnectionsCostOneGoroutine(t *testing.T) {
	for _, tr := range []string{"ws", "sse"} {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, Options{}, waiting(time.Second), nil)
			base := runtime.NumGoroutine()
			const n = 50
			for i := range n {
				c, err := rawOpen(e.srv.Listener.Addr().String(), tr, fmt.Sprintf("r/T%d", i))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
			}
			// Writers exit once the first messages are out; poll for it.
			var g, open int
			for start := time.Now(); time.Since(start) < wait; time.Sleep(10 * time.Millisecond) {
				g, open = runtime.NumGoroutine()-base, e.hub.Stats().Connections[tr]
				if g <= n && open == n {
					break
				}
			}
			if g > n || open != n {
				t.Errorf("%d goroutines for %d idle connections (want %d)", g, open, n)
			}
		})
	}
}

// writeCounter counts the writes to the connections its listener accepts.
type writeCounter struct {
	net.Listener
	writes atomic.Int64
}

func (l *writeCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: c, n: &l.writes}, nil
}

type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// TestAWSMessageIsOneWrite: a message bigger than the connection's small
// write buffer goes out in one write call (one TCP segment, one wake-up of
// the peer), not a flushed header and then the payload.
func TestAWSMessageIsOneWrite(t *testing.T) {
	big := strings.Repeat("x", 6*wsBuffer)
	e := newEnv(t, Options{}, func(_, id string, n int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Interval: time.Second, Payload: fmt.Appendf(nil, `{"n":%d,"pad":%q}`, n, big)}
	}, nil)
	srv := httptest.NewUnstartedServer(e.srv.Config.Handler)
	counter := &writeCounter{Listener: srv.Listener}
	srv.Listener = counter
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(e.hub.Close) // before srv.Close: open streams would hold it up
	e.srv = srv

	ws := e.dialWS("r", "T", nil)
	ws.next() // the first message, after the handshake's own writes
	for i := 1; i <= 3; i++ {
		before := counter.writes.Load()
		e.hub.Notify("r", []string{"T"})
		if got := ws.next(); !strings.HasPrefix(got, fmt.Sprintf(`{"n":%d,`, i)) {
			t.Fatalf("message %d: %.20s…", i, got)
		}
		if n := counter.writes.Load() - before; n != 1 {
			t.Errorf("message %d (%d bytes) took %d writes, want 1", i, len(big)+20, n)
		}
	}
}

// TestAStalledReaderGetsEveryMessageWhole: messages to a peer that stops
// reading are written from the hub's goroutine only as far as the socket
// takes them at once; the rest of a frame is finished by a writer
// goroutine, before the next message. The hub is never held up (a reading
// neighbour gets each update), and once the peer reads, every message
// arrives whole and in order.
func TestAStalledReaderGetsEveryMessageWhole(t *testing.T) {
	const n = 16
	pad := strings.Repeat("x", 1<<20) // 16 MB: more than loopback's socket buffers hold
	e := newEnv(t, Options{SendQueue: 2 * n, WriteTimeout: time.Minute}, func(_, id string, k int, _ time.Time) Update {
		if id == "big" {
			return Update{State: vocab.StateWaiting, Payload: fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, k, pad)}
		}
		return Update{State: vocab.StateWaiting, Payload: fmt.Appendf(nil, `{"ticket":%q,"n":%d}`, id, k)}
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/ws/r/big"
	big, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer big.CloseNow()
	big.SetReadLimit(2 << 20)
	// The first message comes once the hub holds the socket: a notice
	// before then would find no one to write to.
	if _, first, err := big.Read(ctx); err != nil || string(first) != firstPayload("big") {
		t.Fatalf("big's first message %.40q, %v", first, err)
	}
	small := e.dialWS("r", "small", nil)
	small.next()

	for k := 1; k <= n; k++ {
		e.hub.Notify("r", []string{"big"})
		// The hub serves notices in order: once small has this one, big's was written or queued.
		e.hub.Notify("r", []string{"small"})
		if got, want := small.next(), fmt.Sprintf(`{"ticket":"small","n":%d}`, k); got != want {
			t.Fatalf("small got %s, want %s", got, want)
		}
	}
	e.hub.mu.Lock()
	var c *client
	if tk := e.hub.rooms["r"].tickets["big"]; tk != nil && len(tk.clients) == 1 {
		c = tk.clients[0]
	}
	e.hub.mu.Unlock()
	if c == nil {
		t.Fatal("big is not connected")
	}
	if !c.writing.Load() {
		t.Fatal("no writer goroutine waits for the stalled socket: the messages never filled it")
	}

	// 16 MB over loopback: seconds when quiet, far more on a machine loaded
	// by other work (30 s once ran out at the 13th message).
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer rcancel()
	for k := 1; k <= n; k++ {
		_, got, err := big.Read(rctx)
		if err != nil {
			t.Fatalf("message %d: %v", k, err)
		}
		if want := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, k, pad); string(got) != want {
			t.Fatalf("message %d: %d bytes %.20q…, want %d bytes %.20q…", k, len(got), got, len(want), want)
		}
	}
}

// TestFramesOfEveryLengthEncoding: a message's frame carries its length in
// 7, 16 or 64 bits; each boundary reads back whole at the client.
func TestFramesOfEveryLengthEncoding(t *testing.T) {
	sizes := []int{0, 1, 125, 126, 127, 65535, 65536, 70000}
	e := newEnv(t, Options{SendQueue: 16}, func(_, _ string, k int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Payload: []byte(strings.Repeat("y", sizes[(k-1)%len(sizes)]))}
	}, nil)
	ws := e.dialWS("r", "T", &websocket.DialOptions{})
	ws.conn.SetReadLimit(1 << 20)
	ws.next()
	for _, n := range sizes {
		e.hub.Notify("r", []string{"T"})
		if got := ws.next(); len(got) != n || strings.Trim(got, "y") != "" {
			t.Fatalf("a %d-byte message arrived as %d bytes", n, len(got))
		}
	}
}
