package main

import (
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
)

// TestMintedCookiesBuyNoIntentsDuringAnOutage (issue 22, "Buying degraded
// mode"): through the built binary on a real redis-server that is then
// killed, one address fetches 300 fresh visitor cookies from GET
// …/challenge of a room without proof of work and tries to leave an intent
// with each: every one is refused 403 newcomer_refused, while the visitor
// who was in the line before the outage leaves its intent.
func TestMintedCookiesBuyNoIntentsDuringAnOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	const token = "3f9a0c6d2b8e4f1a7c5e9d0b2a4c6e8f"
	p, rs := startOnRedis(t, buildBinary(t), "--admin-token", token)
	base := "http://" + p.addr
	if r := call(t, http.DefaultClient, "PUT", base+"/admin/api/rooms/sale", token,
		`{"paused": true, "product_id": "sneaker", "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create room: %d %v", r.status, r.body)
	}
	newJar := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		c := clientFrom("127.0.0.5")
		c.Jar = jar
		return c
	}
	honest := newJar()
	if r := call(t, honest, "POST", base+"/api/rooms/sale/enter", "", ""); r.status != 200 {
		t.Fatalf("enter before the outage: %d %v", r.status, r.body)
	}
	rs.Kill()
	testkit.Until(t, 15*time.Second, "degraded mode", func() bool {
		return call(t, http.DefaultClient, "POST", base+"/api/rooms/sale/enter", "", "").body["state"] == "bypassed"
	})

	const n = 300
	answers := map[int]int{}
	for i := 0; i < n; i++ {
		c := newJar()
		// The pool of ready challenges may run dry: ask again, as a page does.
		for try := 0; ; try++ {
			r := call(t, c, "GET", base+"/api/rooms/sale/challenge", "", "")
			if r.status == 200 {
				break
			}
			if r.status != http.StatusServiceUnavailable || try == 50 {
				t.Fatalf("challenge %d during the outage: %d %v", i, r.status, r.body)
			}
			time.Sleep(200 * time.Millisecond) // the server's Retry-After; nothing to await
		}
		r := call(t, c, "POST", base+"/api/rooms/sale/intents", "", `{"payload": {"product": "sneaker", "quantity": 1}}`)
		answers[r.status]++
		if r.status != http.StatusForbidden {
			continue
		}
		if e, _ := r.body["error"].(map[string]any); e["code"] != "newcomer_refused" {
			t.Fatalf("refusal %d: %v, want code newcomer_refused", i, r.body)
		}
	}
	t.Logf("%d fresh cookies from GET …/challenge during the outage: answers %v", n, answers)
	if answers[http.StatusForbidden] != n {
		t.Errorf("answers %v: want all %d refused 403", answers, n)
	}
	if r := call(t, honest, "POST", base+"/api/rooms/sale/intents", "", `{"payload": {"product": "sneaker", "quantity": 1}}`); r.status != http.StatusAccepted {
		t.Fatalf("the visitor from before the outage: %d %v", r.status, r.body)
	}
	p.stop(t)
}
