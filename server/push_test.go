package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/waitroom/waitroom/server"
)

// TestAdmissionIsPushedAtOnce: a waiter on a WebSocket hears of its admission
// from the tick's Redis announcement, not at its next tier slot (2 s).
func TestAdmissionIsPushedAtOnce(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { _ = e.srv.Run(ctx) }()
	e.putRoom("sale", `{"paused": true, "batch_size": 1}`)
	b := e.browser()
	r := e.do(b, "POST", "/api/rooms/sale/enter", "")
	id := r.body["ticket"].(string)

	hdr := http.Header{}
	for _, c := range b.Jar.Cookies(mustURL(e.url)) {
		hdr.Add("Cookie", c.Name+"="+c.Value)
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
		&websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	first := readTicket(t, ctx, ws)
	if first["state"] != "waiting" || first["position"] != 1.0 {
		t.Fatalf("first message: %v", first)
	}
	e.putRoom("sale", `{"batch_size": 1}`)
	// The settings change is pushed too (paused → not paused).
	if m := readTicket(t, ctx, ws); m["paused"] != false {
		t.Fatalf("after resume: %v", m)
	}
	s, _ := e.line.Settings(ctx, "sale")
	e.clock.Advance(time.Second)
	start := time.Now()
	if _, err := e.line.Tick(ctx, "sale", &s); err != nil {
		t.Fatal(err)
	}
	m := readTicket(t, ctx, ws)
	if m["state"] != "admitted" || m["token"] == nil {
		t.Fatalf("after tick: %v", m)
	}
	t.Logf("admission reached the socket %v after the tick", time.Since(start))
}

// TestSSEStream: the SSE fallback sends the same ticket JSON as events.
func TestSSEStream(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { _ = e.srv.Run(ctx) }()
	e.putRoom("sale", `{"paused": true}`)
	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/rooms/sale/tickets/"+id+"/events", nil)
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("headers: %v", res.Header)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil || m["ticket"] != id || m["state"] != "waiting" {
				t.Fatalf("event %q: %v", data, err)
			}
			return
		}
	}
	t.Fatalf("stream ended without an event: %v", sc.Err())
}

func TestPushRefusesForeignTickets(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"paused": true}`)
	id := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	wantError(t, e.do(e.browser(), "GET", "/api/rooms/sale/tickets/"+id+"/events", ""), 404, "ticket_not_found")
	wantError(t, e.do(e.browser(), "GET", "/api/rooms/sale/tickets/"+id+"/ws", ""), 404, "ticket_not_found")
}

func readTicket(t *testing.T, ctx context.Context, ws *websocket.Conn) map[string]any {
	t.Helper()
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWebSocketKeepsItsPlaceAfterItsHandler: the hub holds an upgraded
// WebSocket without its handler, so the per-ticket cap must hold the place
// until the socket closes, not until the handler returned.
func TestWebSocketKeepsItsPlaceAfterItsHandler(t *testing.T) {
	e := newLimitedEnv(t, server.Limits{PushPerTicket: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e.putRoom("sale", `{"paused": true}`)
	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	url := "ws" + strings.TrimPrefix(e.url, "http") + "/api/rooms/sale/tickets/" + id + "/ws"
	dial := func() (*websocket.Conn, *http.Response, error) {
		return websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: cookieHeader(e, b)})
	}

	ws, _, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	readTicket(t, ctx, ws)
	if _, res, err := dial(); err == nil || res == nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second socket on a one-socket ticket: %v %v, want 503", res, err)
	}
	// Still served after the refusal.
	e.putRoom("sale", `{"paused": false, "batch_size": 1}`)
	if m := readTicket(t, ctx, ws); m["paused"] != false {
		t.Fatalf("after resume: %v", m)
	}

	// Closing gives the place back once the server has seen it (poll).
	if err := ws.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		ws2, res, err := dial()
		if err == nil {
			ws2.CloseNow()
			break
		}
		if res == nil || res.StatusCode != http.StatusServiceUnavailable || time.Since(start) > 5*time.Second {
			t.Fatalf("after the first socket closed: %v %v", res, err)
		}
	}
}
