package server_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// A cheap cost keeps the tests quick; the protocol is the same at any cost.
const powRoom = `{"bot_protection": {"proof_of_work": "on", "pow_cost": 20}}`

// challengeOf reads the challenge that comes beside a refusal (or alone, from
// the challenge URL).
func challengeOf(t *testing.T, r resp) pow.Challenge {
	t.Helper()
	var body struct {
		Challenge *pow.Challenge `json:"challenge"`
	}
	if err := json.Unmarshal([]byte(r.raw), &body); err != nil || body.Challenge == nil {
		var c pow.Challenge
		if err := json.Unmarshal([]byte(r.raw), &c); err != nil || c.Signature == "" {
			t.Fatalf("no challenge in %d %s", r.status, r.raw)
		}
		return c
	}
	return *body.Challenge
}

func solve(t *testing.T, c pow.Challenge) string {
	t.Helper()
	p, err := pow.Solve(context.Background(), c, 2)
	if err != nil {
		t.Fatal(err)
	}
	return p.Encode()
}

func powBody(payload string) string { return `{"pow": "` + payload + `"}` }

func (e *env) entered(room string) float64 {
	e.t.Helper()
	st := e.admin("GET", "/admin/api/rooms/"+room+"/stats", "")
	if st.status != 200 {
		e.t.Fatalf("stats: %d %s", st.status, st.raw)
	}
	return st.body["entered_total"].(float64)
}

// A script with fresh cookie jars gets a fresh challenge per request and no
// place; a solution takes exactly one place, once.
func TestPowScriptWithoutWorkTakesNoPlace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.putRoom("sale", powRoom)
	seen := map[string]bool{}
	for range 20 {
		r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
		wantError(t, r, 403, "challenge_required")
		c := challengeOf(t, r)
		if seen[c.Parameters.Nonce] || c.Parameters.Data.Room != "sale" {
			t.Fatalf("challenge %+v: repeated or for another room", c.Parameters)
		}
		seen[c.Parameters.Nonce] = true
		if r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("a challenge may be cached: %v", r.header)
		}
	}
	// Nor does an empty solution, or the page without script.
	wantError(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", `{"pow": ""}`), 403, "challenge_required")
	page := e.do(e.browser(), "GET", "/rooms/sale", "")
	if page.status != 200 || !strings.Contains(page.raw, `data-testid="checking"`) || !strings.Contains(page.raw, `data-challenge-url="/api/rooms/sale/challenge"`) ||
		strings.Contains(page.raw, `http-equiv="refresh"`) {
		t.Fatalf("page: %d %.3000s", page.status, page.raw)
	}
	if n := e.entered("sale"); n != 0 {
		t.Fatalf("entered_total %v, want 0", n)
	}

	alice := e.browser()
	c := challengeOf(t, e.do(alice, "POST", "/api/rooms/sale/enter", ""))
	payload := solve(t, c)
	in := e.do(alice, "POST", "/api/rooms/sale/enter", powBody(payload))
	if in.status != 200 || in.body["ticket"] == nil {
		t.Fatalf("enter with a solution: %d %s", in.status, in.raw)
	}
	// Her place is hers without more work: again, and on the page.
	again := e.do(alice, "POST", "/api/rooms/sale/enter", "")
	if again.status != 200 || again.body["ticket"] != in.body["ticket"] {
		t.Fatalf("re-enter: %d %s", again.status, again.raw)
	}
	// A stale or doctored solution does not cost her the place she holds.
	if r := e.do(alice, "POST", "/api/rooms/sale/enter", powBody("junk")); r.status != 200 || r.body["ticket"] != in.body["ticket"] {
		t.Fatalf("re-enter with junk: %d %s", r.status, r.raw)
	}
	if p := e.do(alice, "GET", "/rooms/sale", ""); !strings.Contains(p.raw, in.body["ticket"].(string)) {
		t.Fatalf("page of a visitor in line: %.2000s", p.raw)
	}
	if n := e.entered("sale"); n != 1 {
		t.Fatalf("entered_total %v, want 1", n)
	}
	// Leaving and coming back with the same solution: it is spent.
	if r := e.do(alice, "DELETE", "/api/rooms/sale/tickets/"+in.body["ticket"].(string), ""); r.status != 204 {
		t.Fatalf("leave: %d", r.status)
	}
	r := e.do(alice, "POST", "/api/rooms/sale/enter", powBody(payload))
	wantError(t, r, 403, "challenge_spent")
	if challengeOf(t, r).Parameters.Nonce == c.Parameters.Nonce {
		t.Fatal("the refusal repeats the spent challenge")
	}
}

// Two servers of one deployment share the key file and Redis: a solution
// issued by one is good on the other, and spent on both.
func TestPowSpentAcrossServers(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	prefix := redistest.Prefix(t)
	clock := clockwork.NewFakeClockAt(t0)
	var urls []string
	for range 2 {
		line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{Clock: clock})
		ts := httptest.NewServer(server.New(line, server.Config{AdminToken: adminToken}))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	a := &env{t: t, url: urls[0]}
	b := &env{t: t, url: urls[1]}
	a.putRoom("sale", powRoom)

	alice := a.browser()
	payload := solve(t, challengeOf(t, a.do(alice, "GET", "/api/rooms/sale/challenge", "")))
	in := b.do(alice, "POST", "/api/rooms/sale/enter", powBody(payload))
	if in.status != 200 {
		t.Fatalf("enter on the other server: %d %s", in.status, in.raw)
	}
	b.do(alice, "DELETE", "/api/rooms/sale/tickets/"+in.body["ticket"].(string), "")
	wantError(t, a.do(alice, "POST", "/api/rooms/sale/enter", powBody(payload)), 403, "challenge_spent")
	wantError(t, b.do(alice, "POST", "/api/rooms/sale/enter", powBody(payload)), 403, "challenge_spent")
	if n := a.entered("sale"); n != 1 {
		t.Fatalf("entered_total %v, want 1", n)
	}
}

// Concurrent replays of one solution by one visitor's many tabs: one place.
func TestPowConcurrentReplayIsOnePlace(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", powRoom)
	jar := e.browser()
	payload := solve(t, challengeOf(t, e.do(jar, "GET", "/api/rooms/sale/challenge", "")))
	res := make(chan resp, 8)
	for range 8 {
		go func() { res <- e.do(jar, "POST", "/api/rooms/sale/enter", powBody(payload)) }()
	}
	tickets := map[any]bool{}
	for range 8 {
		r := <-res
		if r.status != 200 {
			t.Fatalf("replay: %d %s", r.status, r.raw)
		}
		tickets[r.body["ticket"]] = true
	}
	if len(tickets) != 1 || e.entered("sale") != 1 {
		t.Fatalf("%d tickets, entered %v: want one place", len(tickets), e.entered("sale"))
	}
}

// What an attacker tries: someone else's solution, another room's, an old
// one, a doctored one, junk. Each is refused by name, with a fresh challenge.
func TestPowRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.putRoom("sale", powRoom)
	e.putRoom("other", powRoom)
	alice, mallory := e.browser(), e.browser()
	c := challengeOf(t, e.do(alice, "GET", "/api/rooms/sale/challenge", ""))
	p, err := pow.Solve(context.Background(), c, 2)
	if err != nil {
		t.Fatal(err)
	}
	good := p.Encode()
	doctored := p
	doctored.Challenge.Parameters.ExpiresAt += 3600
	wrongKey := p
	wrongKey.Solution.Counter = wrongCounter(t, p)
	cases := []struct {
		name             string
		who              *http.Client
		room, body, code string
		status           int
	}{
		{"another visitor's solution", mallory, "sale", powBody(good), "challenge_wrong_visitor", 403},
		{"another room's solution", alice, "other", powBody(good), "challenge_wrong_room", 403},
		{"a doctored challenge", alice, "sale", powBody(doctored.Encode()), "challenge_forged", 403},
		{"a counter that does not solve it", alice, "sale", powBody(wrongKey.Encode()), "challenge_wrong_solution", 403},
		{"junk", alice, "sale", powBody("bm90IGEgcGF5bG9hZA=="), "challenge_malformed", 400},
		{"not a string", alice, "sale", `{"pow": 7}`, "invalid", 400},
	}
	for _, k := range cases {
		r := e.do(k.who, "POST", "/api/rooms/"+k.room+"/enter", k.body)
		wantError(t, r, k.status, k.code)
		if k.code != "invalid" {
			if f := r.body["error"].(map[string]any)["field"]; f != "pow" {
				t.Errorf("%s: field %v, want pow", k.name, f)
			}
			challengeOf(t, r)
		}
	}
	e.clock.Advance(pow.Life)
	wantError(t, e.do(alice, "POST", "/api/rooms/sale/enter", powBody(good)), 403, "challenge_expired")
	if n := e.entered("sale") + e.entered("other"); n != 0 {
		t.Fatalf("entered %v, want 0", n)
	}
}

// The embed's enter costs the same work; the challenge is bound to the embed key.
func TestPowEmbedEnter(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"allowed_embedders": ["https://shop.example"], "bot_protection": {"pow_cost": 20}}`)
	r := e.do(nil, "POST", "/api/rooms/sale/embed/enter", "")
	wantError(t, r, 403, "challenge_required")
	key := r.header.Get("X-Waitroom-Key")
	if key == "" {
		t.Fatalf("no embed key: %v", r.header)
	}
	in := e.do(nil, "POST", "/api/rooms/sale/embed/enter", powBody(solve(t, challengeOf(t, r))), "X-Waitroom-Key", key)
	if in.status != 200 || in.body["ticket"] == nil {
		t.Fatalf("embed enter with a solution: %d %s", in.status, in.raw)
	}
}

// A foreign site's <img src=/rooms/…> or fetch takes no place, even with
// proof of work off; a top-level navigation does.
func TestRoomPageSubresourceTakesNoPlace(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"paused": true}`)
	for _, h := range [][]string{
		{"Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Dest", "script", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Mode", "no-cors"},
	} {
		r := e.do(e.browser(), "GET", "/rooms/sale", "", h...)
		if r.status != 403 || r.header.Get("Set-Cookie") != "" || r.raw != "" {
			t.Fatalf("%v: %d %v %q", h, r.status, r.header, r.raw)
		}
	}
	if n := e.entered("sale"); n != 0 {
		t.Fatalf("entered_total %v after subresource loads, want 0", n)
	}
	for _, h := range [][]string{
		{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "cross-site"},
		nil, // no fetch metadata: an older browser
	} {
		if r := e.do(e.browser(), "GET", "/rooms/sale", "", h...); r.status != 200 || !strings.Contains(r.raw, `data-testid="position"`) {
			t.Fatalf("%v: %d", h, r.status)
		}
	}
	if n := e.entered("sale"); n != 2 {
		t.Fatalf("entered_total %v after two navigations, want 2", n)
	}
}

// While Redis is down an intent costs a solution; single use then holds in
// this server's own spent-set.
func TestPowDegradedIntent(t *testing.T) {
	t.Parallel()
	e := newDegradedEnv(t)
	e.putRoom("sale", powRoom)
	testkit.Eventually(t, 5*time.Second, func() error { // the room reaches the cache by its own loop
		if _, ok := e.line.CachedSettings("sale"); ok {
			return nil
		}
		return errors.New("room never cached")
	})
	bob := e.browser()
	c := challengeOf(t, e.do(bob, "GET", "/api/rooms/sale/challenge", ""))
	e.redis.Kill()
	e.waitState("bypassed", 10*time.Second) // the switch takes ~1 s; a loaded machine needs more
	intent := `{"payload": {"product": "sneaker-drop", "quantity": 1}`
	r := e.do(e.browser(), "POST", "/api/rooms/sale/intents", intent+`}`)
	wantError(t, r, 403, "challenge_required")
	challengeOf(t, r)
	payload := solve(t, c)
	if r := e.do(bob, "POST", "/api/rooms/sale/intents", intent+`, "pow": "`+payload+`"}`); r.status != 202 {
		t.Fatalf("intent with a solution: %d %s", r.status, r.raw)
	}
	wantError(t, e.do(bob, "POST", "/api/rooms/sale/intents", intent+`, "pow": "`+payload+`"}`), 403, "challenge_spent")

	// The accept page's form: its script solves into the "pow" field.
	carol := e.browser()
	page := e.do(carol, "GET", "/rooms/sale/accept", "")
	if !strings.Contains(page.raw, `data-challenge-url="/api/rooms/sale/challenge"`) || !strings.Contains(page.raw, `name="pow"`) {
		t.Fatalf("accept page without the challenge: %.3000s", page.raw)
	}
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}
	if r := e.do(carol, "POST", "/rooms/sale/accept", "quantity=1&pow=", form...); r.status != 403 {
		t.Fatalf("form without work: %d", r.status)
	}
	c = challengeOf(t, e.do(carol, "GET", "/api/rooms/sale/challenge", ""))
	r = e.do(carol, "POST", "/rooms/sale/accept", "quantity=1&pow="+url.QueryEscape(solve(t, c)), form...)
	if r.status != 200 || !strings.Contains(r.raw, `data-testid="intent"`) {
		t.Fatalf("form with a solution: %d %.2000s", r.status, r.raw)
	}
}

// wrongCounter is a counter after p's that does not solve its challenge.
func wrongCounter(t *testing.T, p pow.Payload) int64 {
	t.Helper()
	c := p.Challenge.Parameters
	nonce, _ := hex.DecodeString(c.Nonce)
	salt, _ := hex.DecodeString(c.Salt)
	for n := p.Solution.Counter + 1; ; n++ {
		k, err := pow.DeriveKey(nonce, salt, uint32(n))
		if err != nil {
			t.Fatal(err)
		}
		if !pow.Solves(k, pow.Target(c.Difficulty)) {
			return n
		}
	}
}
