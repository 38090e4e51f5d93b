package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

type liveView struct {
	Room       string `json:"room"`
	Paused     bool   `json:"paused"`
	BatchSize  int64  `json:"batch_size"`
	Activation string `json:"activation"`
	LineOn     *bool  `json:"line_on"`
	LineReason string `json:"line_reason"`
	WaitP95S   *float64
	Deleted    bool `json:"deleted"`
	Point      struct {
		T       int64 `json:"t"`
		Waiting int64 `json:"waiting"`
	} `json:"point"`
	Health struct {
		RedisUp  bool  `json:"redis_up"`
		Degraded *bool `json:"degraded"`
	} `json:"health"`
}

// sessionHeader is the cookie header of a signed-in browser.
func (b *browser) sessionHeader() http.Header {
	u, _ := url.Parse(b.site.url + "/admin")
	h := http.Header{}
	for _, c := range b.c.Jar.Cookies(u) {
		h.Add("Cookie", c.Name+"="+c.Value)
	}
	return h
}

// stream is one live connection's messages.
type stream struct {
	t    *testing.T
	msgs chan string
}

// until reads messages until ok holds for one, failing after wait.
func (s *stream) until(what string, ok func(liveView) bool) liveView {
	s.t.Helper()
	deadline := time.After(wait)
	var last string
	for {
		select {
		case m, open := <-s.msgs:
			if !open {
				s.t.Fatalf("stream ended waiting for %s; last %s", what, last)
			}
			last = m
			var v liveView
			if err := json.Unmarshal([]byte(m), &v); err != nil {
				s.t.Fatalf("message %s: %v", m, err)
			}
			if ok(v) {
				return v
			}
		case <-deadline:
			s.t.Fatalf("no message with %s; last %s", what, last)
		}
	}
}

func (b *browser) dialWS(path string, origin string) (*stream, *http.Response, error) {
	h := b.sessionHeader()
	if origin != "" {
		h.Set("Origin", origin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.site.url, "http")+path, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, res, err
	}
	b.t.Cleanup(func() { conn.CloseNow() })
	s := &stream{t: b.t, msgs: make(chan string, 256)}
	go func() {
		defer close(s.msgs)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			s.msgs <- string(data)
		}
	}()
	return s, res, nil
}

func (b *browser) dialSSE(path string) *stream {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.site.url+path, nil)
	req.Header = b.sessionHeader()
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		b.t.Fatalf("sse %s: %v %v", path, res, err)
	}
	b.t.Cleanup(func() { res.Body.Close() })
	s := &stream{t: b.t, msgs: make(chan string, 256)}
	go func() {
		defer close(s.msgs)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				s.msgs <- d
			}
		}
	}()
	return s
}

func TestLiveRoomOverWebSocketAndSSE(t *testing.T) {
	site := newSite(t, siteOptions{})
	paused := queue.DefaultSettings()
	paused.Paused = true // no fast track: entries wait
	site.putRoom("drop", paused)
	b := site.browser()
	b.signIn()
	ws, _, err := b.dialWS("/admin/rooms/drop/live/ws", site.url)
	if err != nil {
		t.Fatal(err)
	}
	sse := b.dialSSE("/admin/rooms/drop/live/events")
	for _, s := range []*stream{ws, sse} {
		v := s.until("the room at once", func(v liveView) bool { return v.Room == "drop" })
		if v.Point.Waiting != 0 || !v.Health.RedisUp || v.Health.Degraded == nil || *v.Health.Degraded {
			t.Errorf("first message %+v", v)
		}
	}

	// Visitors enter: the count and the entry rate follow, from the sampler.
	for i := range 7 {
		if _, _, err := site.line.Enter(context.Background(), "drop", fmt.Sprintf("visitor-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*stream{ws, sse} {
		s.until("7 waiting", func(v liveView) bool { return v.Point.Waiting == 7 })
	}

	// A control is pushed at once, not at the next sample.
	if p := b.post("/admin/rooms/drop/controls", url.Values{"paused": {"false"}, "batch_size": {"4"}}, "Accept", "application/json", "X-CSRF-Token", b.csrf); p.status != http.StatusOK {
		t.Fatalf("pause: %d", p.status)
	}
	for _, s := range []*stream{ws, sse} {
		s.until("resumed with batch 4", func(v liveView) bool { return !v.Paused && v.BatchSize == 4 })
	}

	// Deleted: the stream says so, so the page can leave.
	if err := site.line.DeleteRoom(context.Background(), "drop"); err != nil {
		t.Fatal(err)
	}
	ws.until("deleted", func(v liveView) bool { return v.Deleted })
}

func TestLiveStreamsNeedASessionAndThisOrigin(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("drop", queue.DefaultSettings())
	anon := site.browser()
	if _, res, err := anon.dialWS("/admin/rooms/drop/live/ws", site.url); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("signed-out WebSocket: %v %v", res, err)
	}
	b := site.browser()
	b.signIn()
	if _, res, err := b.dialWS("/admin/rooms/drop/live/ws", "http://evil.example"); err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin WebSocket: %v %v", res, err)
	}
	req, _ := http.NewRequest(http.MethodGet, site.url+"/admin/rooms/nope/live", nil)
	req.Header = b.sessionHeader()
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown room's live JSON: %v %v", res, err)
	}
}

func TestOverviewStreamListsTheRooms(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("a-room", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	ws, _, err := b.dialWS("/admin/live/ws", site.url)
	if err != nil {
		t.Fatal(err)
	}
	type overview struct {
		Rooms []struct {
			Room    string `json:"room"`
			Waiting int64  `json:"waiting"`
		} `json:"rooms"`
	}
	next := func(what string, ok func(overview) bool) {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case m := <-ws.msgs:
				var o overview
				if json.Unmarshal([]byte(m), &o) == nil && ok(o) {
					return
				}
			case <-deadline:
				t.Fatalf("overview never showed %s", what)
			}
		}
	}
	next("a-room", func(o overview) bool { return len(o.Rooms) == 1 && o.Rooms[0].Room == "a-room" })
	p := b.postForm("/admin/create", url.Values{"room": {"b-room"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create: %d", p.status)
	}
	next("b-room", func(o overview) bool { return len(o.Rooms) == 2 })
}

// The parts other engineers provide show when given, and n/a otherwise.
func TestActivationAndWaitQuantilesFromTheirReaders(t *testing.T) {
	site := newSite(t, siteOptions{deps: func(d *dashboard.Deps) {
		d.Activation = dashboard.ActivationFunc(func(room string) (dashboard.Activation, bool) {
			switch room {
			case "hot":
				return dashboard.Activation{On: true, Reason: "reading 0.93 reached open_at 0.8", Cause: "opened", Reading: 0.93, Threshold: 0.8,
					SignalError: "signal unavailable: timeout"}, true
			case "legacy": // a state kept before causes were
				return dashboard.Activation{Reason: "gate_inflight 0.1"}, true
			}
			return dashboard.Activation{}, false
		})
		d.Waits = waitStatsFunc(func(room string) (time.Duration, time.Duration, bool) {
			return 12 * time.Second, 95 * time.Second, room == "hot"
		})
	}})
	s := queue.DefaultSettings()
	s.Activation = queue.ActivationAdaptive
	s.Adaptive = &queue.Adaptive{Signal: queue.SignalGateInflight, OpenAt: 0.8, CloseAt: 0.5}
	site.putRoom("hot", s)
	site.putRoom("cold", s)
	site.putRoom("legacy", s)
	b := site.browser()
	b.signIn()
	p := b.get("/admin/rooms/hot")
	if byTestID(t, p, "stat-line") != "on" || byTestID(t, p, "stat-line-reason") != "Reading 0.93 reached “open at” (0.8)." ||
		!shown(p, "stat-line-signal") || byTestID(t, p, "stat-line-signal-error") != "signal unavailable: timeout" ||
		byTestID(t, p, "stat-wait-p50") != "12 s" || byTestID(t, p, "stat-wait-p95") != "95 s" {
		t.Errorf("hot: line %q (%q), p50 %q, p95 %q", byTestID(t, p, "stat-line"), byTestID(t, p, "stat-line-reason"),
			byTestID(t, p, "stat-wait-p50"), byTestID(t, p, "stat-wait-p95"))
	}
	// In Korean, the cause in the catalogue's words; the reader's error as code.
	p = b.get("/admin/rooms/hot?lang=ko")
	if got, want := byTestID(t, p, "stat-line-reason"), "측정값 0.93이 “열기 기준”(0.8)에 이르렀습니다."; got != want {
		t.Errorf("Korean reason %q, want %q", got, want)
	}
	if got := byTestID(t, p, "stat-line-signal"); !strings.HasPrefix(got, templates.T(templates.Korean, "admin.line.signal_error")) {
		t.Errorf("Korean signal error %q", got)
	}
	p = b.get("/admin/rooms/legacy?lang=en")
	if byTestID(t, p, "stat-line-reason") != "gate_inflight 0.1" || shown(p, "stat-line-signal") {
		t.Errorf("legacy: reason %q", byTestID(t, p, "stat-line-reason"))
	}
	p = b.get("/admin/rooms/cold")
	if byTestID(t, p, "stat-line") != "n/a" || byTestID(t, p, "stat-wait-p95") != "n/a" {
		t.Errorf("cold: line %q, p95 %q", byTestID(t, p, "stat-line"), byTestID(t, p, "stat-wait-p95"))
	}
	if byTestID(t, p, "stat-outbox") != "n/a" || byTestID(t, p, "stat-results") != "n/a" {
		t.Errorf("no outbox: %q %q", byTestID(t, p, "stat-outbox"), byTestID(t, p, "stat-results"))
	}
}

// waitStatsFunc adapts a function to dashboard.WaitStats.
type waitStatsFunc func(room string) (p50, p95 time.Duration, ok bool)

func (f waitStatsFunc) WaitQuantiles(room string) (time.Duration, time.Duration, bool) {
	return f(room)
}
