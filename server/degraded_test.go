package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
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
	adm   *queue.Admitter
}

func newDegradedEnv(t *testing.T) *degradedEnv {
	t.Helper()
	return newDegradedEnvWith(t, nil)
}

// newDegradedEnvWith lets edit change the server's config.
func newDegradedEnvWith(t *testing.T, edit func(*server.Config)) *degradedEnv {
	t.Helper()
	broker, err := outbox.StartEmbedded(outbox.EmbeddedConfig{Topics: []string{outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	keys, _ := token.Generate()
	return newDegradedServer(t, redistest.Start(t), broker.Addrs(), keys, redistest.Prefix(t), "", edit)
}

// newDegradedServer is one server on rs and the brokers; servers of one
// deployment share keys and prefix, and each has its own id (its Kafka
// groups), as each real server has its own data directory; edit, when set,
// changes the server's config.
func newDegradedServer(t *testing.T, rs *redistest.Server, brokers []string, keys *token.Keyset, prefix, id string, edit func(*server.Config)) *degradedEnv {
	t.Helper()
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	avail := queue.NewAvailability(nil, nil)
	rdb.AddHook(redisstore.Hook(avail))
	store := redisstore.New(rdb, prefix)
	line := queue.NewLine(store, keys, queue.LineOptions{})
	obCfg := outbox.Config{Dir: t.TempDir(), Brokers: brokers, KeySecret: keys.Derive(outbox.KeySecretLabel)}
	if id != "" {
		obCfg.ResultsGroup, obCfg.ViewGroup = "results-"+id, "view-"+id
	}
	ob, err := outbox.Open(obCfg)
	if err != nil {
		t.Fatal(err)
	}
	line.SetIntents(ob)
	cfg := server.Config{AdminToken: adminToken, Avail: avail, Intents: ob}
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
	})
	return &degradedEnv{env: &env{t: t, srv: srv, url: ts.URL, line: line}, redis: rs, avail: avail, ob: ob, adm: adm}
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
	t.Parallel()
	e := newDegradedEnv(t)
	e.putRoom("sale", `{"paused": true, "product_id": "sneaker-drop", "product_name": "Sneaker", "message": "One pair per person."}`)
	waiter := e.browser()
	if r := e.do(waiter, "POST", "/api/rooms/sale/enter", ""); r.body["state"] != "waiting" {
		t.Fatalf("before the outage: %s", r.raw)
	}
	wantError(t, e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`), 409, "not_degraded")
	// Let the admission loop have read the room: its loop runs, holding the
	// lease, only once it knows Redis's data epoch, and only a server that
	// knew the epoch before the loss can tell a Redis that came back empty
	// (put the room back) from one it never knew. (A real server starts
	// with the epoch of its snapshot on disk.) Under load the loop's first
	// read came after the kill, and the room was never restored.
	testkit.Eventually(t, 10*time.Second, func() error {
		if e.adm.Admitting() == 1 {
			return nil
		}
		return errors.New("the room's admission loop has not taken its lease")
	})

	if r := e.do(nil, "GET", "/readyz", ""); r.status != 200 || r.body["mode"] != "normal" {
		t.Fatalf("readyz before the outage: %d %s", r.status, r.raw)
	}
	if r := e.do(nil, "GET", "/api/rooms/sale/mode", ""); r.status != 200 || r.body["mode"] != "normal" {
		t.Fatalf("the room's mode before the outage: %d %s", r.status, r.raw)
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
	// Degraded mode carries the sale: a readiness probe must keep this
	// server in service, and say which mode it is in.
	if r := e.do(nil, "GET", "/readyz", ""); r.status != 200 || r.body["status"] != "ready" || r.body["mode"] != "degraded" {
		t.Fatalf("readyz while degraded: %d %s", r.status, r.raw)
	}
	// The accept page asks under /api/rooms/, where every shipped proxy
	// config routes (they leave /readyz to the balancer).
	if r := e.do(nil, "GET", "/api/rooms/sale/mode", ""); r.status != 200 || r.body["mode"] != "degraded" {
		t.Fatalf("the room's mode while degraded: %d %s", r.status, r.raw)
	}
	if r := e.do(nil, "GET", "/livez", ""); r.status != 200 {
		t.Fatalf("livez while degraded: %d", r.status)
	}

	// Intents are accepted durably; a repeat gives the same id.
	first := e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "sneaker-drop", "quantity": 2}}`)
	if first.status != 202 || first.body["status"] != "accepted" || first.body["intent_id"] == "" {
		t.Fatalf("intent: %d %s", first.status, first.raw)
	}
	id := first.body["intent_id"].(string)
	if again := e.do(waiter, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 3}}`); again.body["intent_id"] != id {
		t.Fatalf("repeat gave %s, want %s", again.raw, id)
	}
	wantError(t, e.do(e.browser(), "GET", "/api/intents/"+id, ""), 404, "intent_not_found")
	testkit.Eventually(t, 10*time.Second, func() error {
		got := e.do(waiter, "GET", "/api/intents/"+id, "")
		if got.body["status"] == "published" {
			return nil
		}
		return fmt.Errorf("intent not published: %s", got.raw)
	})
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
	if msg := testid(doc, "room-message").Text(); msg != "One pair per person." {
		t.Errorf("the accept page shows the room's message %q", msg)
	}

	e.redis.Restart(t)
	// Four probes (2 s) to recover, then the room is put back from this
	// server's copy; generous for a loaded machine.
	took = e.waitState("waiting", 15*time.Second)
	t.Logf("entries waited in line again %v after the restart", took)
	wantError(t, e.do(e.browser(), "POST", "/api/rooms/sale/intents", `{"payload": {}}`), 409, "not_degraded")
}

func TestDrillForcesDegradedMode(t *testing.T) {
	t.Parallel()
	e := newDegradedEnv(t)
	e.putRoom("sale", `{}`)
	testkit.Eventually(t, 5*time.Second, func() error {
		if _, ok := e.line.CachedSettings("sale"); ok {
			return nil
		}
		return errors.New("room never cached")
	})
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
	// Ending the drill with false is automatic (not "forced normal"), as null is.
	if r := e.admin("POST", "/admin/api/degrade", `{"on": false}`); r.body["degraded"] != false || r.body["forced"] != nil {
		t.Fatalf("drill off: %s", r.raw)
	}
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""); r.body["state"] == "bypassed" {
		t.Fatalf("after the drill: %s", r.raw)
	}
}

// TestTwoServersAnswerEveryIntent: two servers on one Redis and one Kafka
// broker, Redis killed. Visitors leave intents on either server (no sticky
// sessions); checkout answers them on the results topic; every visitor then
// sees their intent's result from both servers, and nobody sees anyone
// else's.
func TestTwoServersAnswerEveryIntent(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	broker := kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
	keys, _ := token.Generate()
	prefix := redistest.Prefix(t)
	a := newDegradedServer(t, rs, broker.Addrs(), keys, prefix, "a", nil)
	b := newDegradedServer(t, rs, broker.Addrs(), keys, prefix, "b", nil)
	a.putRoom("sale", `{"product_id": "sneaker-drop"}`)
	for _, s := range []*degradedEnv{a, b} {
		testkit.Eventually(t, 5*time.Second, func() error {
			if _, ok := s.line.CachedSettings("sale"); ok {
				return nil
			}
			return errors.New("room never cached")
		})
	}
	const n = 8
	// The visitors were in line before the outage: only they may leave intents.
	var browsers []*http.Client
	for i := range n {
		s := []*degradedEnv{a, b}[i%2]
		c := s.browser()
		if r := s.do(c, "POST", "/api/rooms/sale/enter", ""); r.status != 200 {
			t.Fatalf("enter %d: %d %s", i, r.status, r.raw)
		}
		browsers = append(browsers, c)
	}
	rs.Kill()
	a.waitState("bypassed", 5*time.Second)
	b.waitState("bypassed", 5*time.Second)

	type taken struct {
		c  *http.Client
		id string
	}
	var all []taken
	for i, c := range browsers {
		s := []*degradedEnv{a, b}[i%2]
		r := s.do(c, "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1}}`)
		if r.status != 202 {
			t.Fatalf("intent %d: %d %s", i, r.status, r.raw)
		}
		all = append(all, taken{c, r.body["intent_id"].(string)})
	}
	var results []kafka.Message
	for _, m := range broker.Read(t, outbox.DefaultIntentsTopic, n) {
		var in outbox.IntentMessage
		if err := json.Unmarshal(m.Value, &in); err != nil {
			t.Fatal(err)
		}
		v, _ := json.Marshal(outbox.ResultMessage{IntentID: in.IntentID, Status: outbox.ResultRejected, Reason: "sold_out"})
		results = append(results, kafka.Message{Key: []byte(in.IntentID), Value: v})
	}
	broker.Write(t, outbox.DefaultResultsTopic, results...)
	for _, tk := range all {
		for _, s := range []*degradedEnv{a, b} {
			testkit.Eventually(t, 20*time.Second, func() error { // the view fills from Kafka: nothing to await
				r := s.do(tk.c, "GET", "/api/intents/"+tk.id, "")
				if r.body["status"] == "rejected" && r.body["reason"] == "sold_out" {
					return nil
				}
				return fmt.Errorf("%s: intent %s never showed its result: %d %s", s.url, tk.id, r.status, r.raw)
			})
			wantError(t, s.do(s.browser(), "GET", "/api/intents/"+tk.id, ""), 404, "intent_not_found")
		}
	}
}
