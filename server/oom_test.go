package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestRedisOutOfMemoryIs503: a real redis-server at maxmemory with
// noeviction refuses the line's writes. The admin API gets 503 with
// Retry-After and the JSON error, not a 500; the refusals count towards the
// availability flag, which moves entries to degraded mode until Redis takes
// writes again, and a visitor's entry waits for that switch instead of
// failing.
func TestRedisOutOfMemoryIs503(t *testing.T) {
	t.Parallel()
	if !redistest.Real(t) {
		t.Skip("redis-server is not on PATH")
	}
	e := newDegradedEnv(t)
	e.putRoom("sale", `{"paused": true}`)
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""); r.body["state"] != "waiting" {
		t.Fatalf("before: %s", r.raw)
	}
	admin := e.redis.Client(t)
	ctx := context.Background()
	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", "1"}} {
		if err := admin.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A write that does not wait for the switch (the admin API's) is a 503.
	r := e.admin("PUT", "/admin/api/rooms/other", `{"bot_protection": {"proof_of_work": "off"}}`)
	wantError(t, r, 503, "unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("503 without Retry-After: %v", r.header)
	}
	// A visitor's entry waits for the switch (server/stall.go) and is
	// answered in degraded mode: no error.
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""); r.status != 200 || r.body["state"] != "bypassed" {
		t.Fatalf("an entry when Redis refused writes: %d %s", r.status, r.raw)
	}
	took := e.waitState("bypassed", 5*time.Second)
	t.Logf("entries answered bypassed %v after Redis reached maxmemory", took)
	if st := e.avail.State(); !st.Degraded || st.RedisUp {
		t.Fatalf("availability: %+v", st)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	took = e.waitState("waiting", 10*time.Second)
	t.Logf("entries waited in line again %v after writes were allowed", took)
}
