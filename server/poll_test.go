package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// statusCounted is a store that counts its status reads.
type statusCounted struct {
	queue.Store
	n atomic.Int64
}

func (s *statusCounted) Status(ctx context.Context, room string, st *queue.Settings, id, identity string, now time.Time) (queue.Ticket, error) {
	s.n.Add(1)
	return s.Store.Status(ctx, room, st, id, identity, now)
}

// runEnv runs e's server until the test ends.
func runEnv(t *testing.T, e *env) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// pollLocal polls the ticket until the server answers it from its view
// of the line (the status reads counted by w stop).
func pollLocal(t *testing.T, e *env, b *http.Client, id string, reads func() int) {
	t.Helper()
	testkit.Until(t, 10*time.Second, "polls answered from the view", func() bool {
		before := reads()
		e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "")
		e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "")
		return reads() == before
	})
}

// TestAPollAfterLeaveSaysLeft: a poll right after the visitor left is not
// answered "waiting" from the view, whose log read may not have the leave.
func TestAPollAfterLeaveSaysLeft(t *testing.T) {
	t.Parallel()
	store, ping := testkit.LineStore(t)
	counted := &statusCounted{Store: store}
	e := newEnvOn(t, counted, ping)
	runEnv(t, e)
	e.putRoom("sale", `{"paused": true}`)
	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	pollLocal(t, e, b, id, func() int { return int(counted.n.Load()) })
	if r := e.do(b, "DELETE", "/api/rooms/sale/tickets/"+id, ""); r.status != http.StatusNoContent {
		t.Fatalf("leave: %d %s", r.status, r.raw)
	}
	r := e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "")
	if r.body["state"] != "expired" || r.body["reason"] != "left" {
		t.Fatalf("poll right after leave: %d %s, want expired (left)", r.status, r.raw)
	}
}

// requestCommands counts the commands sent to Redis on behalf of a
// request (their context is an HTTP request's: http.ServerContextKey),
// alone or in a pipeline; the server's background work (log reads, the
// sign of life) is not counted.
type requestCommands struct{ n atomic.Int64 }

func (c *requestCommands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *requestCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(http.ServerContextKey) != nil {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (c *requestCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(http.ServerContextKey) != nil {
			c.n.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// TestAStatusPollReadsNothing: once the server follows the room, a
// waiting ticket's status polls are answered from its view: no Redis
// command on behalf of a poll (the log reads and the sign of life are per
// room and interval, not per poll). The polls are the waiter's sign of
// life: it is in the server's next snapshot.
func TestAStatusPollReadsNothing(t *testing.T) {
	t.Parallel()
	w := &storeWatch{aliveAt: map[string]float64{}, marked: map[string]float64{}}
	byRequests := &requestCommands{}
	rdb := redistest.Shared(t).Client(t)
	rdb.AddHook(seeHook(w.see))
	rdb.AddHook(byRequests)
	e := newEnvWith(t, rdb, func(c *server.Config) { c.PresentEvery = 20 * time.Millisecond })
	runEnv(t, e)
	e.putRoom("sale", `{"paused": true}`)
	e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	if byRequests.n.Load() == 0 {
		t.Fatal("no command of the enters was counted: the count would miss the polls' too")
	}
	reads := func() int { n, _ := w.state(id); return n }
	pollLocal(t, e, b, id, reads)

	const polls = 200
	beforeReads, beforeAll := reads(), byRequests.n.Load()
	for range polls {
		r := e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "")
		if r.status != http.StatusOK || r.body["state"] != "waiting" || r.body["position"] != 2.0 || r.body["stale"] != nil {
			t.Fatalf("poll: %d %s, want waiting at 2", r.status, r.raw)
		}
	}
	if n := reads() - beforeReads; n != 0 {
		t.Fatalf("%d status reads for %d polls, want none", n, polls)
	}
	if n := byRequests.n.Load() - beforeAll; n != 0 {
		t.Fatalf("%d Redis commands for %d polls, want none", n, polls)
	}
	at := float64(e.clock.Now().UnixMilli())
	testkit.Until(t, 10*time.Second, "the poller in a snapshot", func() bool { _, a := w.state(id); return a == at })
}

// TestAnExhaustedPoolGivesAStaleAnswer: with every connection of the
// server's Redis pool held, a waiting ticket's status is its last known
// place, 200 with "stale": true, not a 503; an enter (a write) still fails.
func TestAnExhaustedPoolGivesAStaleAnswer(t *testing.T) {
	redistest.SkipShortOrFallback(t)
	t.Parallel()
	srv := redistest.Shared(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 2, PoolTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	e := newEnvWith(t, rdb) // not running: no view, every poll reads Redis
	e.putRoom("sale", `{"paused": true}`)
	e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	b := e.browser()
	id := e.do(b, "POST", "/api/rooms/sale/enter", "").body["ticket"].(string)
	if r := e.do(b, "GET", "/api/rooms/sale/tickets/"+id, ""); r.status != http.StatusOK || r.body["position"] != 2.0 {
		t.Fatalf("poll: %d %s", r.status, r.raw)
	}

	ctx := context.Background()
	var held []*redis.Conn
	for range 2 {
		c := rdb.Conn()
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	r := e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "")
	if r.status != http.StatusOK || r.body["state"] != "waiting" || r.body["position"] != 2.0 || r.body["stale"] != true {
		t.Fatalf("poll with the pool exhausted: %d %s, want 200, waiting at 2, stale", r.status, r.raw)
	}
	if r := e.do(e.browser(), "POST", "/api/rooms/sale/enter", ""); r.status != http.StatusServiceUnavailable {
		t.Fatalf("enter with the pool exhausted: %d %s, want 503", r.status, r.raw)
	}
	for _, c := range held {
		_ = c.Close()
	}
	r = e.do(b, "GET", "/api/rooms/sale/tickets/"+id, "")
	if r.status != http.StatusOK || r.body["position"] != 2.0 || r.body["stale"] != nil {
		t.Fatalf("poll once the pool is free: %d %s, want 200 at 2, fresh", r.status, r.raw)
	}
}
