package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// limitEnvs are servers sharing one Redis and one key prefix, as a
// deployment's servers do, each trusting the loopback proxy in front of
// the tests' requests unless trust is false.
func limitEnvs(t *testing.T, n int, trust bool) []*env {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	prefix := redistest.Prefix(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = "http://waitroom.test"
	clock := clockwork.NewFakeClockAt(t0)
	var trusted []netip.Prefix
	if trust {
		trusted = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}
	var out []*env
	for range n {
		line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{Clock: clock})
		srv := server.New(line, server.Config{AdminToken: adminToken, TrustedProxies: trusted,
			Ping: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }})
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		out = append(out, &env{t: t, srv: srv, url: ts.URL, line: line, clock: clock})
	}
	return out
}

// limitedRoom: the line is paused so every place stays waiting, and proof
// of work is off so only the per-client limits are at work.
func limitedRoom(e *env, room string, enters, places int) {
	e.putRoom(room, fmt.Sprintf(`{"paused": true, "bot_protection": {"proof_of_work": "off", "enters_per_ip_per_minute": %d, "places_per_ip": %d}}`, enters, places))
}

func from(ip string) []string { return []string{"X-Forwarded-For", ip} }

func wantLimited(t *testing.T, r resp, code, limit string) {
	t.Helper()
	wantError(t, r, http.StatusTooManyRequests, code)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After %q, want whole seconds ≥ 1", r.header.Get("Retry-After"))
	}
	if msg := r.body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, limit) {
		t.Errorf("message %q does not name %s", msg, limit)
	}
}

func TestEntersPerIPPerMinute(t *testing.T) {
	e := limitEnvs(t, 1, true)[0]
	limitedRoom(e, "sale", 3, 0)
	first := e.browser()
	for i := range 3 {
		c := e.browser()
		if i == 0 {
			c = first
		}
		if r := e.do(c, "POST", "/api/rooms/sale/enter", "", from("203.0.113.7")...); r.status != 200 {
			t.Fatalf("enter %d: %d %s", i, r.status, r.raw)
		}
	}
	r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.7")...)
	wantLimited(t, r, "rate_limited", "enters_per_ip_per_minute")
	if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra > 20 {
		t.Errorf("Retry-After %d s, want about the 20 s a place takes to come back at 3 a minute", ra)
	}
	// The waiting page and the embed's enter count the same.
	page := e.do(e.browser(), "GET", "/rooms/sale", "", append(from("203.0.113.7"), "Accept", "text/html")...)
	if page.status != http.StatusTooManyRequests || page.header.Get("Retry-After") == "" {
		t.Errorf("waiting page: %d, want 429 with Retry-After", page.status)
	}
	wantLimited(t, e.do(e.browser(), "POST", "/api/rooms/sale/embed/enter", "", from("203.0.113.7")...), "rate_limited", "enters_per_ip_per_minute")
	// Asking again for a place one holds is no new place.
	if r := e.do(first, "POST", "/api/rooms/sale/enter", "", from("203.0.113.7")...); r.status != 200 {
		t.Errorf("the first visitor again: %d %s", r.status, r.raw)
	}
	// Another client is not affected.
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.8")...); r.status != 200 {
		t.Errorf("another address: %d %s", r.status, r.raw)
	}
	// Off by default: another room without limits takes them all.
	e.putRoom("open", `{"paused": true, "bot_protection": {"proof_of_work": "off"}}`)
	for i := range 5 {
		if r := e.do(e.browser(), "POST", "/api/rooms/open/enter", "", from("203.0.113.7")...); r.status != 200 {
			t.Fatalf("a room without limits, enter %d: %d", i, r.status)
		}
	}
}

// X-Forwarded-For names the client only when a trusted proxy sends it: a
// client cannot rotate through addresses by writing the header itself.
func TestEnterLimitIgnoresForwardedForFromAnUntrustedPeer(t *testing.T) {
	e := limitEnvs(t, 1, false)[0]
	limitedRoom(e, "sale", 2, 0)
	for i := range 2 {
		if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from(fmt.Sprintf("198.51.100.%d", i))...); r.status != 200 {
			t.Fatalf("enter %d: %d", i, r.status)
		}
	}
	wantLimited(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("198.51.100.99")...), "rate_limited", "enters_per_ip_per_minute")
}

// An IPv6 subscriber usually holds a whole /64: rotating within it gains nothing.
func TestEnterLimitCountsIPv6PerSlash64(t *testing.T) {
	e := limitEnvs(t, 1, true)[0]
	limitedRoom(e, "sale", 2, 0)
	for _, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"} {
		if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from(ip)...); r.status != 200 {
			t.Fatalf("%s: %d", ip, r.status)
		}
	}
	wantLimited(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("2001:db8:1:2:dead:beef:0:1")...), "rate_limited", "enters_per_ip_per_minute")
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("2001:db8:1:3::1")...); r.status != 200 {
		t.Errorf("the next /64: %d %s", r.status, r.raw)
	}
}

// places_per_ip counts the live places a client holds: one that ends
// (left, abandoned, completed) frees its count.
func TestPlacesPerIPFreeWhenAPlaceEnds(t *testing.T) {
	e := limitEnvs(t, 1, true)[0]
	limitedRoom(e, "sale", 0, 2)
	a, b := e.browser(), e.browser()
	ra := e.do(a, "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...)
	rb := e.do(b, "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...)
	if ra.status != 200 || rb.status != 200 {
		t.Fatalf("enters: %d %d", ra.status, rb.status)
	}
	wantLimited(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...), "too_many_places", "places_per_ip")
	if r := e.do(a, "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...); r.status != 200 {
		t.Errorf("a holder asking again: %d", r.status)
	}
	if r := e.do(a, "DELETE", "/api/rooms/sale/tickets/"+ra.body["ticket"].(string), "", from("203.0.113.9")...); r.status != 204 {
		t.Fatalf("leave: %d", r.status)
	}
	c := e.browser()
	if r := e.do(c, "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...); r.status != 200 {
		t.Fatalf("after a place ended: %d %s", r.status, r.raw)
	}
	wantLimited(t, e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...), "too_many_places", "places_per_ip")

	// An abandoned place frees its count too, once the admission loop drops it.
	s, err := e.line.Settings(context.Background(), "sale")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Duration(s.AbandonAfterS+1) * time.Second)
	if _, err := e.line.Tick(context.Background(), "sale", &s); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.9")...); r.status != 200 {
			t.Fatalf("after abandonment, enter %d: %d %s", i, r.status, r.raw)
		}
	}
}

// Many clients at once from one address take exactly the limit.
func TestPlacesPerIPHoldsUnderConcurrency(t *testing.T) {
	e := limitEnvs(t, 1, true)[0]
	limitedRoom(e, "sale", 0, 5)
	codes := make(chan int, 40)
	for range 40 {
		go func() {
			req, _ := http.NewRequest("POST", e.url+"/api/rooms/sale/enter", nil)
			req.Header.Set("X-Forwarded-For", "203.0.113.10")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			res.Body.Close()
			codes <- res.StatusCode
		}()
	}
	ok := 0
	for range 40 {
		if <-codes == 200 {
			ok++
		}
	}
	if ok != 5 {
		t.Errorf("%d places taken at once, want 5", ok)
	}
}

// The limits are kept in Redis: two servers of one deployment share them.
func TestLimitsHoldAcrossServers(t *testing.T) {
	es := limitEnvs(t, 2, true)
	limitedRoom(es[0], "sale", 4, 3)
	for i := range 3 {
		if r := es[i%2].do(es[0].browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.11")...); r.status != 200 {
			t.Fatalf("enter %d: %d %s", i, r.status, r.raw)
		}
	}
	wantLimited(t, es[1].do(es[1].browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.11")...), "too_many_places", "places_per_ip")
	wantLimited(t, es[0].do(es[0].browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.11")...), "too_many_places", "places_per_ip")
	for i := range 4 {
		if r := es[i%2].do(es[0].browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.12")...); i < 3 && r.status != 200 {
			t.Fatalf("second address, enter %d: %d", i, r.status)
		}
	}
}

// The per-client keys live under the room's hash tag and expire.
func TestLimitKeysExpire(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	e := limitEnvs(t, 1, true)[0]
	limitedRoom(e, "sale", 5, 5)
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "", from("203.0.113.13")...); r.status != 200 {
		t.Fatalf("enter: %d", r.status)
	}
	var keys []string
	iter := rdb.Scan(context.Background(), 0, "*203.0.113.13*", 100).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if len(keys) != 2 {
		t.Fatalf("keys %v, want the rate and the places of the bucket", keys)
	}
	for _, k := range keys {
		if !strings.Contains(k, "{sale}:") {
			t.Errorf("key %q is not under the room's hash tag", k)
		}
		if ttl, err := rdb.PTTL(context.Background(), k).Result(); err != nil || ttl <= 0 {
			t.Errorf("key %q: ttl %v %v, want one", k, ttl, err)
		}
	}
}
