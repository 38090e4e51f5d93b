package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

const adminToken = "test-admin-token-0123456789"

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type env struct {
	t     *testing.T
	srv   *server.Server
	url   string
	line  *queue.Line
	clock *clockwork.FakeClock
}

// newEnv is a server on the test's store: the memory store under -short,
// redis-server otherwise (testkit.LineStore).
func newEnv(t *testing.T) *env {
	t.Helper()
	store, ping := testkit.LineStore(t)
	return newEnvOn(t, store, ping)
}

// newEnvWith is a server on rdb, for tests that watch or break Redis itself.
func newEnvWith(t *testing.T, rdb redis.UniversalClient, conf ...func(*server.Config)) *env {
	t.Helper()
	return newEnvOn(t, redisstore.New(rdb, redistest.Prefix(t)),
		func(ctx context.Context) error { return rdb.Ping(ctx).Err() }, conf...)
}

// newEnvOn is a server on store; conf changes its config.
func newEnvOn(t *testing.T, store queue.Store, ping func(context.Context) error, conf ...func(*server.Config)) *env {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = "http://waitroom.test"
	clock := clockwork.NewFakeClockAt(t0)
	line := queue.NewLine(store, keys,
		queue.LineOptions{Clock: clock, Jitter: func(max time.Duration) time.Duration { return max / 2 }})
	cfg := server.Config{AdminToken: adminToken, Ping: ping}
	for _, c := range conf {
		c(&cfg)
	}
	srv := server.New(line, cfg)
	ts := httptest.NewServer(checkedByOpenAPI(t, srv))
	t.Cleanup(ts.Close)
	return &env{t: t, srv: srv, url: ts.URL, line: line, clock: clock}
}

// browser is one visitor with its own cookie jar.
func (e *env) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (e *env) do(c *http.Client, method, path, body string, hdr ...string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	out := resp{status: res.StatusCode, header: res.Header, raw: string(data)}
	_ = json.Unmarshal(data, &out.body)
	return out
}

func (e *env) admin(method, path, body string) resp {
	return e.do(nil, method, path, body, "Authorization", "Bearer "+adminToken)
}

// putRoom stores a room as body says, every field it leaves out at its
// default: a PUT, or where that would reset fields the room set (409), a
// merge patch that names them null; rooms of
// tests about something else than bot protection have proof of work off
// unless body says otherwise.
func (e *env) putRoom(room, body string) {
	e.t.Helper()
	if !strings.Contains(body, "bot_protection") {
		body = `{"bot_protection": {"proof_of_work": "off"},` + strings.TrimPrefix(strings.TrimSpace(body), "{")
		body = strings.Replace(body, ",}", "}", 1)
	}
	r := e.admin("PUT", "/admin/api/rooms/"+room, body)
	if r.status == http.StatusConflict {
		r = e.admin("PATCH", "/admin/api/rooms/"+room, wholeRoom(e.t, body))
	}
	if r.status/100 != 2 {
		e.t.Fatalf("put room: %d %s", r.status, r.raw)
	}
}

// wholeRoom is body with every settings field it leaves out sent as null:
// as a merge patch, it replaces the room.
func wholeRoom(t testing.TB, body string) string {
	t.Helper()
	var sent map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &sent); err != nil {
		t.Fatalf("room body %s: %v", body, err)
	}
	all, _ := json.Marshal(queue.DefaultSettings())
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(all, &fields)
	for name := range fields {
		if _, ok := sent[name]; !ok {
			sent[name] = json.RawMessage("null")
		}
	}
	out, _ := json.Marshal(sent)
	return string(out)
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func wantError(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	e, _ := r.body["error"].(map[string]any)
	if e == nil || e["code"] != code || e["message"] == "" {
		t.Fatalf("error body %s, want code %q with a message", r.raw, code)
	}
}

func TestEnterStatusAndTicketShape(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"batch_size": 1, "target_url": "https://shop.test/checkout?x=1"}`)
	alice, bob := e.browser(), e.browser()
	first := e.do(alice, "POST", "/api/rooms/sale/enter", "")
	if first.status != 200 || first.body["state"] != "admitted" {
		t.Fatalf("first: %d %s", first.status, first.raw)
	}
	for _, k := range []string{"room", "ticket", "state", "position", "waiting", "eta_s", "next_update_ms", "token", "orderable_at", "redirect_url"} {
		if _, ok := first.body[k]; !ok {
			t.Fatalf("ticket JSON lacks %q: %s", k, first.raw)
		}
	}
	if ru := first.body["redirect_url"].(string); !strings.HasPrefix(ru, "https://shop.test/checkout?") ||
		!strings.Contains(ru, "wr_code=h.") || strings.Contains(ru, first.body["token"].(string)) || !strings.Contains(ru, "x=1") {
		t.Fatalf("redirect_url %v", first.body["redirect_url"])
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z07:00", first.body["orderable_at"].(string)); err != nil {
		t.Fatalf("orderable_at: %v", err)
	}
	var cookie string
	for _, c := range strings.Split(first.header.Get("Set-Cookie"), ";") {
		cookie += strings.TrimSpace(strings.ToLower(c)) + ";"
	}
	if !strings.Contains(cookie, "httponly") || !strings.Contains(cookie, "wr_vid=") {
		t.Fatalf("visitor cookie %q", first.header.Get("Set-Cookie"))
	}

	second := e.do(bob, "POST", "/api/rooms/sale/enter", "")
	if second.body["state"] != "waiting" || second.body["position"] != 1.0 || second.body["token"] != nil {
		t.Fatalf("second: %s", second.raw)
	}
	if second.body["next_update_ms"] != 2000.0 || second.body["eta_s"] == nil {
		t.Fatalf("second: %s", second.raw)
	}
	id := second.body["ticket"].(string)
	again := e.do(bob, "POST", "/api/rooms/sale/enter", "")
	if again.body["ticket"] != id {
		t.Fatalf("re-enter gave %v, want %s", again.body["ticket"], id)
	}
	st := e.do(bob, "GET", "/api/rooms/sale/tickets/"+id, "")
	if st.status != 200 || st.body["ticket"] != id || st.body["position"] != 1.0 {
		t.Fatalf("status: %d %s", st.status, st.raw)
	}
	// The place and time at entry, for the page's progress and "in line since".
	if st.body["entry_position"] != 1.0 {
		t.Errorf("entry_position %v, want 1", st.body["entry_position"])
	}
	enteredAt, _ := st.body["entered_at"].(string)
	if at, err := time.Parse("2006-01-02T15:04:05.000Z07:00", enteredAt); err != nil || at.IsZero() {
		t.Errorf("entered_at %v: %v, want the moment of entry", st.body["entered_at"], err)
	}
	wantError(t, e.do(alice, "GET", "/api/rooms/sale/tickets/"+id, ""), 404, "ticket_not_found")
	wantError(t, e.do(nil, "GET", "/api/rooms/sale/tickets/"+id, ""), 404, "ticket_not_found")

	if r := e.do(bob, "DELETE", "/api/rooms/sale/tickets/"+id, ""); r.status != 204 {
		t.Fatalf("leave: %d %s", r.status, r.raw)
	}
	if r := e.do(bob, "GET", "/api/rooms/sale/tickets/"+id, ""); r.body["state"] != "expired" || r.body["entry_position"] != 0.0 || r.body["entered_at"] != nil {
		t.Fatalf("after leave: %s", r.raw)
	}
}

func TestUserTokenIdentityIsOnePlaceAcrossBrowsers(t *testing.T) {
	e := newEnv(t)
	secret := "a-shop-secret-of-some-length"
	e.putRoom("sale", `{"paused": true, "user_secret": "`+secret+`"}`)
	ut, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "user-42"}).SignedString([]byte(secret))
	a := e.do(e.browser(), "POST", "/api/rooms/sale/enter", `{"user_token":"`+ut+`"}`)
	b := e.do(e.browser(), "POST", "/api/rooms/sale/enter", `{"user_token":"`+ut+`"}`)
	if a.status != 200 || a.body["ticket"] != b.body["ticket"] {
		t.Fatalf("two browsers, one user: %s / %s", a.raw, b.raw)
	}
	// Status with the user token from a third browser: it is the same person.
	st := e.do(e.browser(), "GET", "/api/rooms/sale/tickets/"+a.body["ticket"].(string), "", "Authorization", "Bearer "+ut)
	if st.status != 200 {
		t.Fatalf("status by user token: %d %s", st.status, st.raw)
	}
	bad, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "user-42"}).SignedString([]byte("another-secret-entirely"))
	r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", `{"user_token":"`+bad+`"}`)
	wantError(t, r, 400, "invalid")
	if r.body["error"].(map[string]any)["field"] != "user_token" {
		t.Fatalf("error names %v", r.raw)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{}`)
	wantError(t, e.do(nil, "POST", "/api/rooms/nope/enter", ""), 404, "room_not_found")
	wantError(t, e.do(nil, "POST", "/api/rooms/NOT_A_SLUG/enter", ""), 404, "room_not_found")
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/enter", `{"user_token": 5}`), 400, "invalid")
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/enter", `{"user_token": `), 400, "invalid")
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/enter", `{"surprise": 1}`), 400, "invalid")
	wantError(t, e.do(nil, "GET", "/api/rooms/sale/tickets/0123456789abcdef0123456789abcdef", ""), 404, "ticket_not_found")
	wantError(t, e.do(nil, "GET", "/api/rooms/sale/tickets/x", ""), 404, "ticket_not_found")
	big := `{"user_token":"` + strings.Repeat("a", 70<<10) + `"}`
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/enter", big), 413, "request_entity_too_large")
	wantError(t, e.do(nil, "GET", "/admin/api/rooms", ""), 401, "unauthorized")
	wantError(t, e.do(nil, "GET", "/admin/api/rooms", "", "Authorization", "Bearer wrong"), 401, "unauthorized")
	wantError(t, e.do(nil, "GET", "/nowhere", ""), 404, "not_found")
	wantError(t, e.do(nil, "POST", "/api/tokens/verify", `{}`), 400, "invalid")

	for body, field := range map[string]string{
		`{"capacity": 0}`:                                       "capacity",
		`{"capacity": "many"}`:                                  "capacity",
		`{"batch_interval_ms": 1}`:                              "batch_interval_ms",
		`{"activation": "sometimes"}`:                           "activation",
		`{"target_url": "javascript:x"}`:                        "target_url",
		`{"tiers": [{"max_position": 5, "interval_ms": 1000}]}`: "tiers[0].max_position",
		`{"colour": "red"}`:                                     "colour",
		`[1,2]`:                                                 "body",
	} {
		r := e.admin("PUT", "/admin/api/rooms/x", body)
		wantError(t, r, 400, "invalid")
		if got := r.body["error"].(map[string]any)["field"]; got != field {
			t.Errorf("%s: error names %v, want %s", body, got, field)
		}
	}
	wantError(t, e.admin("PUT", "/admin/api/rooms/Bad_Room", `{}`), 400, "invalid")
	wantError(t, e.admin("GET", "/admin/api/rooms/none", ""), 404, "room_not_found")
}

func TestRedisUnreachableIs503(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	e := newEnvWith(t, rdb)
	r := e.do(nil, "POST", "/api/rooms/sale/enter", "")
	wantError(t, r, 503, "unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	if r := e.do(nil, "GET", "/readyz", ""); r.status != 503 {
		t.Fatalf("readyz: %d", r.status)
	}
	if r := e.do(nil, "GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
}

func TestAdminRoomsAndStats(t *testing.T) {
	e := newEnv(t)
	if r := e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": 7, "title": "Drop"}`); r.status != 201 || r.body["capacity"] != 7.0 || r.body["batch_size"] != 10.0 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	// A PUT that leaves out a field the room set would reset it: refused,
	// naming PUT's replace and the field, and nothing changes.
	r := e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": 8, "bot_protection": {"proof_of_work": "off"}}`)
	wantError(t, r, 409, "replace")
	if msg, _ := r.body["error"].(map[string]any)["message"].(string); r.body["error"].(map[string]any)["field"] != "title" ||
		!strings.Contains(msg, "replaces the whole room") || !strings.Contains(msg, "title") || !strings.Contains(msg, "PATCH") {
		t.Fatalf("partial replace: %s", r.raw)
	}
	if r := e.admin("GET", "/admin/api/rooms/sale", ""); r.body["capacity"] != 7.0 || r.body["title"] != "Drop" {
		t.Fatalf("get after a refused replace: %s", r.raw)
	}
	// Named, the field is replaced on purpose.
	if r := e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": 8, "title": "", "bot_protection": {"proof_of_work": "off"}}`); r.status != 200 {
		t.Fatalf("replace: %d %s", r.status, r.raw)
	}
	if r := e.admin("GET", "/admin/api/rooms/sale", ""); r.body["capacity"] != 8.0 || r.body["title"] != "" {
		t.Fatalf("get after replace: %s", r.raw)
	}
	list := e.admin("GET", "/admin/api/rooms", "")
	rooms, _ := list.body["rooms"].([]any)
	if len(rooms) != 1 || rooms[0].(map[string]any)["id"] != "sale" {
		t.Fatalf("list: %s", list.raw)
	}
	for i := 0; i < 3; i++ {
		e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	}
	st := e.admin("GET", "/admin/api/rooms/sale/stats", "")
	for k, want := range map[string]float64{"entered_total": 3, "admitted_total": 3, "active": 3, "waiting": 0, "abandoned_total": 0} {
		if st.body[k] != want {
			t.Fatalf("stats %s = %v, want %v: %s", k, st.body[k], want, st.raw)
		}
	}
	if _, ok := st.body["admitted_rate"]; !ok {
		t.Fatalf("stats lack admitted_rate: %s", st.raw)
	}
	if r := e.admin("DELETE", "/admin/api/rooms/sale", ""); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/enter", ""), 404, "room_not_found")
	wantError(t, e.admin("DELETE", "/admin/api/rooms/sale", ""), 404, "room_not_found")
}

func TestVerifyAndCompleteRefusals(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"jitter_ms": 1000, "session_ttl_s": 60}`)
	e.putRoom("other", `{}`)
	verify := func(tok, room string) resp {
		b, _ := json.Marshal(map[string]string{"token": tok, "room": room})
		return e.do(nil, "POST", "/api/tokens/verify", string(b))
	}
	enterToken := func() string {
		r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
		tok, _ := r.body["token"].(string)
		if tok == "" {
			t.Fatalf("no token: %s", r.raw)
		}
		return tok
	}
	reason := func(r resp) any { return r.body["reason"] }

	tok := enterToken()
	// The fixture's jitter is half of jitter_ms: orderable at t0+500ms, so not yet.
	if r := verify(tok, "sale"); r.body["valid"] != false || reason(r) != "not_yet_valid" {
		t.Fatalf("before nbf: %s", r.raw)
	}
	e.clock.Advance(2 * time.Second)
	if r := verify(tok, "sale"); r.body["valid"] != true || r.body["room"] != "sale" || r.body["sub"] == "" || r.body["expires_at"] == nil {
		t.Fatalf("valid token: %s", r.raw)
	}
	if r := verify(tok, "other"); reason(r) != "wrong_room" {
		t.Fatalf("other room: %s", r.raw)
	}
	forged := tok[:len(tok)-4] + "AAAA"
	if r := verify(forged, ""); reason(r) != "forged" {
		t.Fatalf("forged: %s", r.raw)
	}
	if r := verify("not.a.jwt", ""); r.body["valid"] != false {
		t.Fatalf("garbage: %s", r.raw)
	}
	other, _ := token.Generate()
	foreign, _ := other.Sign(token.EntryClaims{Issuer: "http://waitroom.test", Room: "sale", Subject: "x", TicketID: "0123456789abcdef0123456789abcdef",
		IssuedAt: t0, NotBefore: t0, ExpiresAt: t0.Add(time.Hour)})
	if r := verify(foreign, ""); reason(r) != "forged" {
		t.Fatalf("another key: %s", r.raw)
	}

	// Complete frees the slot and the token stops verifying.
	if r := e.do(nil, "POST", "/api/rooms/sale/complete", `{"token":"`+tok+`"}`); r.status != 200 {
		t.Fatalf("complete: %d %s", r.status, r.raw)
	}
	if r := verify(tok, "sale"); reason(r) != "completed" {
		t.Fatalf("after complete: %s", r.raw)
	}
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/complete", `{"token":"`+tok+`"}`), 409, "token_completed")
	wantError(t, e.do(nil, "POST", "/api/rooms/sale/complete", `{"token":"`+forged+`"}`), 400, "token_forged")

	// Expiry: past exp the token is expired.
	tok2 := enterToken()
	e.clock.Advance(2 * time.Minute)
	if r := verify(tok2, "sale"); reason(r) != "expired" {
		t.Fatalf("expired: %s", r.raw)
	}
}

func TestReclaimedTokenStopsVerifying(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"jitter_ms": 0, "session_ttl_s": 5}`)
	r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	tok := r.body["token"].(string)
	ctx := context.Background()
	// Reclaim by tick while the JWT itself is still within exp (exp is rounded down, the slot is not).
	e.clock.Advance(5 * time.Second)
	s, _ := e.line.Settings(ctx, "sale")
	if _, err := e.line.Tick(ctx, "sale", &s); err != nil {
		t.Fatal(err)
	}
	v, err := e.line.Verify(ctx, tok, "sale")
	if err != nil || v.Valid {
		t.Fatalf("reclaimed token: %+v %v", v, err)
	}
	if v.Reason != "reclaimed" && v.Reason != "expired" {
		t.Fatalf("reason %q", v.Reason)
	}
}

func TestJWKSVerifiesIssuedTokens(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{}`)
	r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	jw := e.do(nil, "GET", "/.well-known/jwks.json", "")
	keys, _ := jw.body["keys"].([]any)
	if jw.status != 200 || len(keys) != 1 || keys[0].(map[string]any)["kid"] == "" {
		t.Fatalf("jwks: %s", jw.raw)
	}
	var set struct{ Keys []map[string]string }
	_ = json.Unmarshal(bytes.NewBufferString(jw.raw).Bytes(), &set)
	tok := r.body["token"].(string)
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if err != nil || parsed.Header["kid"] != set.Keys[0]["kid"] || parsed.Header["alg"] != "EdDSA" {
		t.Fatalf("token header %v, jwks %v: %v", parsed.Header, set.Keys, err)
	}
}

// TestTokenDoesNotCarryTheVisitorCookie: a token's sub names the visitor
// without being its cookie, so whoever sees a token cannot become the visitor.
func TestTokenDoesNotCarryTheVisitorCookie(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{}`)
	b := e.browser()
	r := e.do(b, "POST", "/api/rooms/sale/enter", "")
	tok, _ := r.body["token"].(string)
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(tok, claims); err != nil {
		t.Fatal(err)
	}
	var cookie string
	for _, c := range b.Jar.Cookies(mustURL(e.url)) {
		if c.Name == "wr_vid" {
			cookie = c.Value
		}
	}
	if cookie == "" || claims["sub"] == cookie || len(claims["sub"].(string)) != 32 {
		t.Fatalf("sub %v, cookie %q", claims["sub"], cookie)
	}
	// Using the sub as a cookie gets someone else's (a new) identity, not the ticket.
	thief := e.browser()
	thief.Jar.SetCookies(mustURL(e.url), []*http.Cookie{{Name: "wr_vid", Value: claims["sub"].(string), Path: "/"}})
	wantError(t, e.do(thief, "GET", "/api/rooms/sale/tickets/"+r.body["ticket"].(string), ""), 404, "ticket_not_found")
}
