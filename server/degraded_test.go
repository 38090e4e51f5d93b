package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/outbox"
	"github.com/waitroom/waitroom/queue/pow"
	"github.com/waitroom/waitroom/queue/redistest"
	"github.com/waitroom/waitroom/queue/token"
	"github.com/waitroom/waitroom/server"
)

// degradedEnv is a real server on its own redis-server (so the test can kill
// it), with the availability probe running on the real clock, and the outbox
// on real SQLite relaying to the in-process Kafka-protocol broker.
type degradedEnv struct {
	*env
	redis *redistest.Server
	avail *queue.Availability
	ob    *outbox.Outbox
}

func newDegradedEnv(t *testing.T) *degradedEnv {
	t.Helper()
	return newDegradedEnvWith(t, nil)
}

// newDegradedEnvWith lets edit change the server's config.
func newDegradedEnvWith(t *testing.T, edit func(*server.Config)) *degradedEnv {
	t.Helper()
	rs := redistest.Start(t)
	rdb := redis.NewUniversalClient(queue.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	avail := queue.NewAvailability(nil, nil)
	rdb.AddHook(avail.Hook())
	keys, _ := token.Generate()
	store := queue.NewRedisStore(rdb, redistest.Prefix(t))
	line := queue.NewLine(store, keys, queue.LineOptions{})
	broker, err := outbox.StartEmbedded(outbox.EmbeddedConfig{Topics: []string{outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.Open(outbox.Config{Dir: t.TempDir(), Brokers: broker.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{AdminToken: adminToken, Avail: avail, Intents: ob, PowKeys: pow.Inline{}}
	if edit != nil {
		edit(&cfg)
	}
	srv := server.New(line, cfg)
	ts := httptest.NewServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 4)
	adm := queue.NewAdmitter(line)
	adm.Degraded = avail.Degraded
	for _, run := range []func(context.Context) error{
		func(ctx context.Context) error { return avail.Run(ctx, store.Probe) },
		adm.Run, srv.Run, ob.Run,
	} {
		go func() { _ = run(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		cancel()
		for i := 0; i < 4; i++ {
			<-done
		}
		_ = ob.Close()
		broker.Close()
	})
	return &degradedEnv{env: &env{t: t, srv: srv, url: ts.URL, line: line}, redis: rs, avail: avail, ob: ob}
}

// waitState enters as a fresh visitor until the answer has state want, or fails after limit.
func (e *degradedEnv) waitState(want string, limit time.Duration) time.Duration {
	e.t.Helper()
	start := time.Now()
	for {
		r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
		if r.body["state"] == want {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			e.t.Fatalf("no %q answer within %v; last: %d %s", want, limit, r.status, r.raw)
		}
		time.Sleep(20 * time.Millisecond) // polling an outside process's effect: nothing to await
	}
}

func TestRedisKilledSwitchesToIntentsAndBack(t *testing.T) {
	e := newDegradedEnv(t)
	e.putRoom("sale", `{"paused": true, "product_id": "sneaker-drop", "product_name": "Sneaker"}`)
	waiter := e.browser()
	if r := e.do(waiter, "POST", "/api/rooms/sale/enter", ""); r.body["state"] != "waiting" {
		t.Fatalf("before the outage: %s", r.raw)
	}
	wantError(t, e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`), 409, "not_degraded")
	// Let every server's admission loop have read the room.
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := e.line.CachedRoom("sale"); ok {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("room never cached")
		}
	}

	e.redis.Kill()
	took := e.waitState("bypassed", 2*time.Second)
	t.Logf("entries answered bypassed %v after SIGKILL", took)
	r := e.do(waiter, "POST", "/api/rooms/sale/enter", "")
	if r.body["accept_url"] != "/rooms/sale/accept" {
		t.Fatalf("bypassed without accept_url: %s", r.raw)
	}
	if st := e.admin("GET", "/admin/api/degrade", ""); st.body["degraded"] != true || st.body["redis_up"] != false {
		t.Fatalf("degrade state: %s", st.raw)
	}

	// Intents are accepted durably; a repeat gives the same id.
	first := e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "sneaker-drop", "quantity": 2}}`)
	if first.status != 202 || first.body["status"] != "accepted" || first.body["intent_id"] == "" {
		t.Fatalf("intent: %d %s", first.status, first.raw)
	}
	id := first.body["intent_id"].(string)
	if again := e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 5}}`); again.body["intent_id"] != id {
		t.Fatalf("repeat gave %s, want %s", again.raw, id)
	}
	wantError(t, e.do(e.browser(), "GET", "/api/intents/"+id, ""), 404, "intent_not_found")
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		got := e.do(waiter, "GET", "/api/intents/"+id, "")
		if got.body["status"] == "published" {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("intent not published: %s", got.raw)
		}
	}
	// Bad input while degraded.
	wantError(t, e.do(waiter, "POST", "/api/rooms/nope/intents", `{"payload": {}}`), 404, "room_not_found")
	wantError(t, e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": [1]}`), 400, "invalid")
	wantError(t, e.do(waiter, "POST", "/api/rooms/sale/intents", `{}`), 400, "invalid")
	wantError(t, e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"x": 1`), 400, "invalid")
	big, _ := json.Marshal(map[string]any{"payload": map[string]string{"note": strings.Repeat("x", 9000)}})
	wantError(t, e.do(e.browser(), "POST", "/api/rooms/sale/intents", string(big)), 413, "payload_too_large")

	// The waiting page sends visitors to the accept page, which takes the order.
	res, doc := e.page(e.browser(), "/rooms/sale")
	if res.Request.URL.Path != "/rooms/sale/accept" || testid(doc, "accept-product").Text() != "Sneaker" {
		t.Fatalf("page while degraded: %s", res.Request.URL)
	}

	e.redis.Restart(t)
	took = e.waitState("waiting", 5*time.Second)
	t.Logf("entries waited in line again %v after the restart", took)
	wantError(t, e.do(e.browser(), "POST", "/api/rooms/sale/intents", `{"payload": {}}`), 409, "not_degraded")
}

func TestDrillForcesDegradedMode(t *testing.T) {
	e := newDegradedEnv(t)
	e.putRoom("sale", `{}`)
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := e.line.CachedRoom("sale"); ok {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("room never cached")
		}
	}
	if r := e.admin("POST", "/admin/api/degrade", `{"on": true}`); r.status != 200 || r.body["degraded"] != true || r.body["all_servers"] != true {
		t.Fatalf("drill on: %d %s", r.status, r.raw)
	}
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""); r.body["state"] != "bypassed" {
		t.Fatalf("during the drill: %s", r.raw)
	}
	// A push connection opened now starts with the bypassed answer, and
	// leaving waits for Redis.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/rooms/sale/tickets/0123456789abcdef0123456789abcdef/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(res.Body)
	line, _ := br.ReadString('\n')
	for !strings.HasPrefix(line, "data:") && line != "" {
		line, _ = br.ReadString('\n')
	}
	res.Body.Close()
	if !strings.Contains(line, `"state":"bypassed"`) || !strings.Contains(line, `"accept_url":"/rooms/sale/accept"`) {
		t.Fatalf("first event during the drill: %q", line)
	}
	wantError(t, e.do(e.browser(), "DELETE", "/api/rooms/sale/tickets/0123456789abcdef0123456789abcdef", ""), 503, "unavailable")
	wantError(t, e.admin("POST", "/admin/api/degrade", `{"on": "yes"}`), 400, "invalid")
	if r := e.admin("POST", "/admin/api/degrade", `{"on": null}`); r.body["degraded"] != false {
		t.Fatalf("drill off: %s", r.raw)
	}
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""); r.body["state"] == "bypassed" {
		t.Fatalf("after the drill: %s", r.raw)
	}
}
