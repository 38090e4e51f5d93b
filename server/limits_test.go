package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// bodyTimeout is the tests' body deadline: short so they run fast.
const bodyTimeout = time.Second

// newLimitedEnv is newEnv with limits, its hub running.
func newLimitedEnv(t *testing.T, l server.Limits) *env {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(t0)
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys,
		queue.LineOptions{Clock: clock, Jitter: func(max time.Duration) time.Duration { return max / 2 }})
	srv := server.New(line, server.Config{AdminToken: adminToken, Limits: l})
	ts := httptest.NewServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Run(ctx) }()
	t.Cleanup(func() { srv.Close(); ts.Close(); cancel(); <-done })
	return &env{t: t, srv: srv, url: ts.URL, line: line, clock: clock}
}

// rawHTTP is one client connection written by hand, as an attacker would.
type rawHTTP struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, url string) *rawHTTP {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second)) // the test's own bound
	return &rawHTTP{t: t, c: c, br: bufio.NewReader(c)}
}

func (r *rawHTTP) write(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.c, s); err != nil {
		r.t.Fatal(err)
	}
}

// answer reads one response: status, Retry-After and the error code if any.
func (r *rawHTTP) answer() (status int, retryAfter, code string) {
	r.t.Helper()
	res, err := http.ReadResponse(r.br, nil)
	if err != nil {
		r.t.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	var body struct {
		Error struct{ Code, Message string }
	}
	data, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(data, &body)
	if res.StatusCode >= 400 && body.Error.Message == "" {
		r.t.Fatalf("%d without the JSON error: %q", res.StatusCode, data)
	}
	return res.StatusCode, res.Header.Get("Retry-After"), body.Error.Code
}

// closed reports whether the server has closed the connection: EOF, or a
// reset when the client was still writing as the server closed. A read that
// times out, or a byte, means the connection is still open.
func (r *rawHTTP) closed() bool {
	_, err := r.br.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func TestSlowOrMissingBodyIsCutOff(t *testing.T) {
	t.Parallel()
	e := newLimitedEnv(t, server.Limits{BodyTimeout: bodyTimeout})
	e.putRoom("sale", `{"paused": true}`)
	enter := "POST /api/rooms/sale/enter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n"

	t.Run("declared and never sent", func(t *testing.T) {
		r := dialRaw(t, e.url)
		start := time.Now()
		r.write(enter)
		status, _, code := r.answer()
		took := time.Since(start)
		if status != http.StatusRequestTimeout || code != "body_timeout" {
			t.Fatalf("answer %d %s, want 408 body_timeout", status, code)
		}
		if took < bodyTimeout || took > bodyTimeout+3*time.Second {
			t.Fatalf("answered after %v, want about %v", took, bodyTimeout)
		}
		if !r.closed() {
			t.Fatal("connection left open after the timeout")
		}
	})

	t.Run("one byte at a time", func(t *testing.T) {
		r := dialRaw(t, e.url)
		start := time.Now()
		r.write(enter)
		stop := make(chan struct{})
		defer close(stop)
		go func() { // 1 byte per 200 ms: the 2 s of the issue, scaled to the test's deadline
			tk := time.NewTicker(200 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
					if _, err := r.c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		status, _, code := r.answer()
		if took := time.Since(start); status != http.StatusRequestTimeout || code != "body_timeout" || took > bodyTimeout+3*time.Second {
			t.Fatalf("answer %d %s after %v, want 408 body_timeout after about %v", status, code, took, bodyTimeout)
		}
		if !r.closed() {
			t.Fatal("connection left open after the timeout")
		}
	})

	t.Run("a kept-alive connection is not cut between requests", func(t *testing.T) {
		r := dialRaw(t, e.url)
		get := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
		r.write(get)
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("first request: %d", status)
		}
		time.Sleep(bodyTimeout + bodyTimeout/2) // let the first request's deadline pass: the time is the test
		r.write(get)
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("second request on the same connection: %d", status)
		}
		r.write("POST /api/rooms/sale/enter HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("enter with a prompt body: %d", status)
		}
	})
}

// cookieHeader is a browser's cookies as a header, for WebSocket dials.
func cookieHeader(e *env, b *http.Client) http.Header {
	hdr := http.Header{}
	for _, c := range b.Jar.Cookies(mustURL(e.url)) {
		hdr.Add("Cookie", c.Name+"="+c.Value)
	}
	return hdr
}

// sse opens an event stream and returns its reader once the first event came.
func openSSE(t *testing.T, ctx context.Context, e *env, b *http.Client, id string, hdr ...string) (*http.Response, *bufio.Scanner) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/rooms/sale/tickets/"+id+"/events", nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 {
		return res, nil
	}
	sc := bufio.NewScanner(res.Body)
	nextEvent(t, sc)
	return res, sc
}

func nextEvent(t *testing.T, sc *bufio.Scanner) map[string]any {
	t.Helper()
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("stream ended: %v", sc.Err())
	return nil
}

// unpausedEvent reads a stream's events until one says the room is open, at
// most a few: an update the server sent before the change may come first.
func unpausedEvent(t *testing.T, sc *bufio.Scanner) map[string]any {
	t.Helper()
	var m map[string]any
	for range 5 {
		if m = nextEvent(t, sc); m["paused"] == false {
			break
		}
	}
	return m
}

func TestPushStreamsOutliveTheBodyDeadline(t *testing.T) {
	t.Parallel()
	e := newLimitedEnv(t, server.Limits{BodyTimeout: bodyTimeout})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e.putRoom("sale", `{"paused": true}`)
	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
		&websocket.DialOptions{HTTPHeader: cookieHeader(e, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	readTicket(t, ctx, ws)
	_, sc := openSSE(t, ctx, e, b, id)

	time.Sleep(2 * bodyTimeout) // past the deadline a request would have had: the time is the test
	e.putRoom("sale", `{"paused": false, "batch_size": 1}`)
	if m := readTicket(t, ctx, ws); m["paused"] != false {
		t.Fatalf("websocket after the deadline: %v", m)
	}
	if m := unpausedEvent(t, sc); m["paused"] != false {
		t.Fatalf("event stream after the deadline: %v", m)
	}
}

func TestPushConnectionsAreCappedPerTicketAndPerClient(t *testing.T) {
	e := newLimitedEnv(t, server.Limits{PushPerTicket: 2, PushPerIP: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e.putRoom("sale", `{"paused": true}`)
	alice, bob, carol := e.browser(), e.browser(), e.browser()
	ids := map[*http.Client]string{}
	for _, b := range []*http.Client{alice, bob, carol} {
		ids[b] = e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	}
	refused := func(res *http.Response, what string) {
		t.Helper()
		var body struct{ Error struct{ Code string } }
		_ = json.NewDecoder(res.Body).Decode(&body)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || body.Error.Code != "too_many_connections" {
			t.Fatalf("%s: %d %v %+v, want 503 too_many_connections with Retry-After", what, res.StatusCode, res.Header, body)
		}
	}

	_, a1 := openSSE(t, ctx, e, alice, ids[alice])
	_, a2 := openSSE(t, ctx, e, alice, ids[alice])
	res, _ := openSSE(t, ctx, e, alice, ids[alice])
	refused(res, "alice's third stream")
	// The WebSocket counts on the same ticket: refused before the upgrade.
	_, wres, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+ids[alice]+"/ws",
		&websocket.DialOptions{HTTPHeader: cookieHeader(e, alice)})
	if err == nil || wres == nil {
		t.Fatalf("alice's websocket over the cap: %v", err)
	}
	refused(wres, "alice's websocket")

	bres, b1 := openSSE(t, ctx, e, bob, ids[bob]) // the address's third
	// An untrusted peer's X-Forwarded-For names nobody: carol is still this address.
	res, _ = openSSE(t, ctx, e, carol, ids[carol], "X-Forwarded-For", "203.0.113.7")
	refused(res, "carol's stream, fourth from one address")

	// Those already open keep working.
	e.putRoom("sale", `{"paused": false, "batch_size": 1}`)
	for i, sc := range []*bufio.Scanner{a1, a2, b1} {
		if m := unpausedEvent(t, sc); m["paused"] != false {
			t.Fatalf("stream %d after the refusals: %v", i, m)
		}
	}
	// A closed stream gives its place back: carol gets in once the server
	// has seen bob's stream end (its request context ends; poll for it).
	bres.Body.Close()
	start := time.Now()
	testkit.Eventually(t, 5*time.Second, func() error {
		res, sc := openSSE(t, ctx, e, carol, ids[carol])
		if res.StatusCode == 200 && sc != nil {
			t.Logf("bob's place came back %v after his stream closed", time.Since(start))
			return nil
		}
		refused(res, "carol's stream while bob's is closing")
		return errors.New("bob's closed stream never gave its place back")
	})
}

func TestListenerCapsOpenConnections(t *testing.T) {
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: e.srv, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hs.Serve(server.LimitListener(ln, 2, nil)) }()
	t.Cleanup(func() { _ = hs.Close() })
	url := "http://" + ln.Addr().String()
	get := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

	// Two kept-alive connections hold the two places.
	held := []*rawHTTP{dialRaw(t, url), dialRaw(t, url)}
	for i, r := range held {
		r.write(get)
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("connection %d: %d", i, status)
		}
	}
	// The third is told why, then closed.
	r := dialRaw(t, url)
	r.write(get)
	status, retry, code := r.answer()
	if status != http.StatusServiceUnavailable || retry == "" || code != "over_capacity" {
		t.Fatalf("over the cap: %d Retry-After %q %s, want 503 over_capacity with Retry-After", status, retry, code)
	}
	if !r.closed() {
		t.Fatal("refused connection left open")
	}
	// Those held keep working.
	for i, r := range held {
		r.write(get)
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("held connection %d after the refusal: %d", i, status)
		}
	}
	// A closed one gives its place back once the server sees it go (poll).
	_ = held[0].c.Close()
	testkit.Eventually(t, 5*time.Second, func() error {
		r := dialRaw(t, url)
		r.write(get)
		status, _, _ := r.answer()
		if status == 200 {
			return nil
		}
		return fmt.Errorf("the place never came back: %d", status)
	})
}
