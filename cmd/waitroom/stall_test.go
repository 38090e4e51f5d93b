package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestShortRedisPauseCostsNoError: through the built binary on a real
// redis-server, visitors enter and read their tickets while Redis is paused
// for 0.5 s (CLIENT PAUSE, below the default --degrade-after of 1 s): no
// request gets a 5xx, some waited through the pause, and the server never
// switched to degraded mode.
func TestShortRedisPauseCostsNoError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if !redistest.Real(t) {
		t.Skip("needs redis-server: miniredis has no CLIENT PAUSE")
	}
	const token = "stall-test-admin-token-0123456789ab"
	p, rs := startOnRedis(t, buildBinary(t), "--admin-token", token)
	base := "http://" + p.addr
	admin := &http.Client{Timeout: 10 * time.Second}
	if r := call(t, admin, "PUT", base+"/admin/api/rooms/sale", token, `{"capacity": 1000, "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}

	const workers = 8
	const perWorker = 400 // bounded; stopped once the pause is over
	var slow atomic.Int64 // requests that took longer than the pause's half
	var sent atomic.Int64
	var mu sync.Mutex
	failures := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	started := make(chan struct{}, workers)
	for i := range workers {
		wg.Go(func() {
			jar, _ := cookiejar.New(nil)
			c := clientFrom(fmt.Sprintf("127.0.0.%d", 60+i))
			c.Jar = jar
			ticket := ""
			for n := range perWorker {
				select {
				case <-stop:
					return
				default:
				}
				method, url := "POST", base+"/api/rooms/sale/enter"
				if ticket != "" && n%4 != 0 {
					method, url = "GET", base+"/api/rooms/sale/tickets/"+ticket
				}
				req, _ := http.NewRequest(method, url, nil)
				t0 := time.Now()
				res, err := c.Do(req)
				if err != nil {
					mu.Lock()
					failures[err.Error()]++
					mu.Unlock()
					continue
				}
				var body struct {
					Ticket string `json:"ticket"`
				}
				if method == "POST" && res.StatusCode == 200 {
					_ = json.NewDecoder(res.Body).Decode(&body)
					ticket = body.Ticket
				}
				res.Body.Close()
				if time.Since(t0) > 250*time.Millisecond {
					slow.Add(1)
				}
				sent.Add(1)
				if res.StatusCode >= 500 {
					mu.Lock()
					failures[fmt.Sprintf("%s %d", method, res.StatusCode)]++
					mu.Unlock()
				}
				if n == 0 {
					started <- struct{}{}
				}
			}
		})
	}
	for range workers {
		<-started
	}
	rdb := rs.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before := sent.Load()
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", "500", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	// Traffic goes on through the pause and a second after it.
	testkit.Until(t, 30*time.Second, "requests after the pause", func() bool { return sent.Load() > before+200 })
	close(stop)
	wg.Wait()

	t.Logf("%d requests, %d of them over 250 ms, failures %v", sent.Load(), slow.Load(), failures)
	if len(failures) > 0 {
		t.Errorf("a 0.5 s Redis pause gave errors: %v (of %d requests)", failures, sent.Load())
	}
	if slow.Load() == 0 {
		t.Errorf("no request waited through the pause: the test did not stall anything")
	}
	if r := call(t, admin, "GET", base+"/admin/api/degrade", token, ""); r.status != 200 || r.body["degraded"] != false {
		t.Errorf("degrade state after the pause: %d %v", r.status, r.body)
	}
	p.stop(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if strings.Contains(l, "switching to degraded mode") {
			t.Errorf("the server switched to degraded mode for a 0.5 s pause: %s", l)
		}
	}
}
