package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestPollsCostRedisNothing: through the built binary on a real
// redis-server, waiters from 8 client addresses poll their tickets 100
// times each. Redis hears next to nothing for it (before the server
// answered polls from its view, each cost ~7 commands), positions never go
// up, and a poll right after a leave says the ticket left.
func TestPollsCostRedisNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if !redistest.Real(t) {
		t.Skip("needs redis-server: Redis's own command counts are the measure")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	const token = "polls-test-admin-token-0123456789ab"
	p, rs := startOnRedis(t, buildBinary(t), "--admin-token", token)
	base := "http://" + p.addr
	admin := clientFrom("127.0.0.1")
	// Paused, so nobody leaves the line by admission while it is polled.
	if r := call(t, admin, "PUT", base+"/admin/api/rooms/sale", token, `{"paused": true, "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	type waiter struct {
		c      *http.Client
		ticket string
		place  float64
	}
	var waiters []*waiter
	for i := range 8 {
		c := clientFrom(fmt.Sprintf("127.0.1.%d", 20+i))
		c.Jar, _ = cookiejar.New(nil)
		r := call(t, c, "POST", base+"/api/rooms/sale/enter", "", "")
		if r.status != 200 || r.body["state"] != "waiting" {
			t.Fatalf("enter %d: %d %v", i, r.status, r.body)
		}
		w := &waiter{c: c, ticket: r.body["ticket"].(string), place: r.body["position"].(float64)}
		// The first read of a ticket this server has not answered yet may
		// go to the store; the measure is the polls after it.
		if r := call(t, c, "GET", base+"/api/rooms/sale/tickets/"+w.ticket, "", ""); r.status != 200 {
			t.Fatalf("first poll %d: %d %v", i, r.status, r.body)
		}
		waiters = append(waiters, w)
	}
	rdb := rs.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// What the server sends Redis anyway (its loops), over a second.
	idleStart, c0 := time.Now(), commands(t, ctx, rdb)
	time.Sleep(time.Second) // the span measured, not a synchronisation
	idleRate := float64(commands(t, ctx, rdb)-c0) / time.Since(idleStart).Seconds()

	const rounds = 100
	start, c1 := time.Now(), commands(t, ctx, rdb)
	for range rounds {
		for i, w := range waiters {
			r := call(t, w.c, "GET", base+"/api/rooms/sale/tickets/"+w.ticket, "", "")
			if r.status != 200 || r.body["state"] != "waiting" {
				t.Fatalf("poll of waiter %d: %d %v", i, r.status, r.body)
			}
			if pos := r.body["position"].(float64); pos > w.place {
				t.Fatalf("waiter %d's place went up from %v to %v", i, w.place, pos)
			} else {
				w.place = pos
			}
		}
	}
	took := time.Since(start)
	polls := rounds * len(waiters)
	net := float64(commands(t, ctx, rdb)-c1) - idleRate*took.Seconds()
	perPoll := max(net, 0) / float64(polls)
	t.Logf("%d polls in %v: %.3f Redis commands a poll beyond the server's own %.1f a second", polls, took, perPoll, idleRate)
	if perPoll > 0.5 {
		t.Errorf("%.2f Redis commands a poll: polls of waiting tickets should be answered from the server's view", perPoll)
	}

	// A leave is heard by the very next poll.
	w := waiters[3]
	if r := call(t, w.c, "DELETE", base+"/api/rooms/sale/tickets/"+w.ticket, "", ""); r.status != 204 {
		t.Fatalf("leave: %d %v", r.status, r.body)
	}
	if r := call(t, w.c, "GET", base+"/api/rooms/sale/tickets/"+w.ticket, "", ""); r.body["state"] != "expired" || r.body["reason"] != "left" {
		t.Fatalf("poll right after the leave: %d %v, want expired (left)", r.status, r.body)
	}
	// Another client's copy of a ticket is no way in: its polls are refused.
	if r := call(t, waiters[0].c, "GET", base+"/api/rooms/sale/tickets/"+waiters[1].ticket, "", ""); r.status != 404 {
		t.Fatalf("a poll of someone else's ticket: %d %v, want 404", r.status, r.body)
	}
}

// commands is the sum of Redis's command calls so far (INFO commandstats).
func commands(t *testing.T, ctx context.Context, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, l := range strings.Split(info, "\n") {
		if _, rest, ok := strings.Cut(l, "calls="); ok && strings.HasPrefix(l, "cmdstat_") {
			v, _, _ := strings.Cut(rest, ",")
			c, _ := strconv.ParseInt(v, 10, 64)
			n += c
		}
	}
	return n
}
