package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/vocab"
)

// tokenExpiry reads a JWT's exp without checking it: the test counts the
// tokens a visitor holds, as a checkout verifying offline would accept them.
func tokenExpiry(t *testing.T, tok string) time.Time {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Exp float64 `json:"exp"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return time.Unix(int64(c.Exp), 0)
}

// TestRedisRestartedFromAnOlderSnapshot runs two servers of the real binary
// on one redis-server, saves an RDB, lets the line move on (two complete,
// two more are admitted, a room is made), and restarts redis-server from
// the older RDB. The servers notice that Redis went back in time: the new
// room is back, no more entry tokens than the capacity are ever valid at
// once, and no waiter is shown a higher position than it was told.
func TestRedisRestartedFromAnOlderSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	bin := buildBinary(t)
	rs := redistest.Start(t)
	const token = "stale-test-admin-token-0123456789ab"
	start := func() *proc {
		dataDir := t.TempDir()
		if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
			t.Fatalf("create signing key: %v\n%s", err, out)
		}
		return startBinary(t, bin, "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(), "--admin-token", token,
			"--kafka-brokers", "embedded", "--embed-demo-addr", "off", "--log-format", "json")
	}
	a := start()
	// Visitors ask A only (each server has its own signing key here); B
	// admits when it holds the lease, and must notice the loss too.
	b := start()
	base := "http://" + a.addr
	c := &http.Client{Timeout: 10 * time.Second}
	const capacity = 4
	const ttl = 5 * time.Second
	room := fmt.Sprintf(`{"capacity": %d, "batch_size": 10, "batch_interval_ms": 100, "jitter_ms": 0, "session_ttl_s": %d, "abandon_after_s": 120, "arrival_window_s": 0, "idle_after_s": 0, "bot_protection": {"proof_of_work": "off"}}`,
		capacity, int(ttl/time.Second))
	if r := call(t, c, "PUT", base+"/admin/api/rooms/sale", token, room); r.status != 201 {
		t.Fatalf("create sale: %d %v", r.status, r.body)
	}

	type visitor struct {
		c      *http.Client
		ticket string
		told   int64 // lowest position told; 0 before any
	}
	var vs []*visitor
	for i := range 8 {
		jar, _ := cookiejar.New(nil)
		v := &visitor{c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
		r := call(t, v.c, "POST", base+"/api/rooms/sale/enter", "", "")
		if r.status != 200 {
			t.Fatalf("enter %d: %d %v", i, r.status, r.body)
		}
		v.ticket, _ = r.body["ticket"].(string)
		vs = append(vs, v)
	}
	// tokens are every entry token handed out, with its expiry; done the
	// ones spent at checkout.
	tokens := map[string]time.Time{}
	done := map[string]bool{}
	holder := map[*visitor]string{}
	most := 0 // the most valid tokens seen at once
	valid := func(now time.Time) int {
		n := 0
		for tok, exp := range tokens {
			if !done[tok] && now.Before(exp) {
				n++
			}
		}
		return n
	}
	// poll reads every visitor's ticket on A, keeps new tokens, and checks
	// that no position went up and the valid tokens fit the capacity.
	poll := func(when string) (admitted, waiting int) {
		t.Helper()
		for i, v := range vs {
			r := call(t, v.c, "GET", base+"/api/rooms/sale/tickets/"+v.ticket, "", "")
			if r.status != 200 {
				t.Fatalf("%s: status of visitor %d: %d %v", when, i, r.status, r.body)
			}
			switch r.body["state"] {
			case "admitted":
				admitted++
				if tok, _ := r.body["token"].(string); tok != "" {
					if _, seen := tokens[tok]; !seen {
						tokens[tok] = tokenExpiry(t, tok)
					}
					holder[v] = tok
				}
			case "waiting":
				waiting++
				pos := int64(r.body["position"].(float64))
				if v.told > 0 && pos > v.told {
					t.Errorf("%s: visitor %d was told place %d, now %d", when, i, v.told, pos)
				}
				if v.told == 0 || pos < v.told {
					v.told = pos
				}
			}
		}
		n := valid(time.Now())
		most = max(most, n)
		if n > capacity {
			t.Fatalf("%s: %d valid entry tokens for a capacity of %d", when, n, capacity)
		}
		return admitted, waiting
	}
	testkit.Until(t, 20*time.Second, "the first four admitted", func() bool {
		adm, _ := poll("before the snapshot")
		return adm == capacity && len(tokens) == capacity
	})

	rdb := rs.Client(t)
	ctx := context.Background()
	clock := func() int64 { n, _ := rdb.Get(ctx, vocab.KeyPrefix+"epoch:clock").Int64(); return n }
	older := rs.Snapshot(t)
	saved := clock()

	// The line moves on: two check out, two more are admitted, a room is made.
	spent := 0
	for _, v := range vs {
		if tok := holder[v]; tok != "" && spent < 2 {
			if r := call(t, c, "POST", base+"/api/rooms/sale/complete", "", `{"token": "`+tok+`"}`); r.status != 200 {
				t.Fatalf("complete: %d %v", r.status, r.body)
			}
			done[tok] = true
			spent++
		}
	}
	testkit.Until(t, 20*time.Second, "two more admitted", func() bool {
		poll("after the snapshot")
		return len(tokens) == capacity+2
	})
	if r := call(t, c, "PUT", base+"/admin/api/rooms/late", token, `{"bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create late: %d %v", r.status, r.body)
	}
	// Every server has read the clock past the snapshot (it reads it each
	// second): what a server saw is later than the RDB.
	testkit.Until(t, 10*time.Second, "the clock past the snapshot", func() bool { return clock() > saved+4 })

	rs.RestartFrom(t, older)
	restarted := time.Now()
	testkit.Until(t, 20*time.Second, "the room made after the snapshot back", func() bool {
		return call(t, c, "GET", base+"/admin/api/rooms/late", token, "").status == 200 &&
			call(t, c, "GET", "http://"+b.addr+"/admin/api/rooms/late", token, "").status == 200
	})
	// The hold lasts the tokens' life from the restart; the line then
	// moves again, and the four who waited are admitted.
	testkit.Until(t, 3*ttl+20*time.Second, "the four left admitted after the hold", func() bool {
		adm, _ := poll("after the restart")
		return adm >= capacity && time.Since(restarted) > ttl
	})
	if since := time.Since(restarted); since < ttl {
		t.Errorf("admitted again %v after the restart: before the tokens from before could expire (%v)", since, ttl)
	}

	t.Logf("at most %d valid entry tokens at once for a capacity of %d; admitted again %v after the restart",
		most, capacity, time.Since(restarted).Round(100*time.Millisecond))
	a.stop(t)
	b.stop(t)
	rewound, lost := 0, 0
	for _, p := range []*proc{a, b} {
		p.onlyJSON(t)
		p.mu.Lock()
		saw := false
		for _, l := range p.lines {
			if strings.Contains(l, "Redis went back in time") {
				rewound++
			}
			if strings.Contains(l, "Redis lost data") {
				saw = true
			}
		}
		p.mu.Unlock()
		if saw {
			lost++
		}
	}
	if rewound != 1 || lost != 2 {
		t.Errorf("logs: %d servers said Redis went back in time (want 1), %d that it lost data (want 2)", rewound, lost)
	}
}
