package redisstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// incr is a script that counts its runs.
var incr = redis.NewScript(`return redis.call('INCR', KEYS[1])`)

// stall keeps Redis busy for ARGV[1] ms, as a slow script does: below the
// busy-reply threshold (5 s) Redis answers nobody meanwhile.
var stall = redis.NewScript(`local t = redis.call('TIME')
local stop = t[1] * 1000 + t[2] / 1000 + tonumber(ARGV[1])
repeat t = redis.call('TIME') until t[1] * 1000 + t[2] / 1000 >= stop
return 1`)

// TestScriptsRunOnceAfterATimeout: a script that Redis ran but answered
// after the client's read timeout (Redis stalled by a slow script) ran once
// with the server's client (NewClient), on a single server and on a
// cluster, and failed its caller; a plain write is still retried, and
// without ScriptsOnce the script runs again.
func TestScriptsRunOnceAfterATimeout(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) {
		srv := redistest.Start(t)
		x := stalled{reader: srv.Client(t), nodes: []*redis.Client{srv.Client(t)}}
		opts := func() *redis.UniversalOptions { return &redis.UniversalOptions{Addrs: []string{srv.Addr()}} }
		if n, err := x.runs(t, redisstore.NewClient(opts()), "script"); n != 1 || err == nil {
			t.Fatalf("script: ran %d times (%v), want once and a failure", n, err)
		}
		if n, _ := x.runs(t, redisstore.NewClient(opts()), "plain"); n != 2 {
			t.Fatalf("plain write: ran %d times, want 2 (the client's one retry)", n)
		}
		// The control: go-redis's own retry, which ScriptsOnce takes away.
		if n, _ := x.runs(t, redis.NewUniversalClient(redisstore.FailFast(opts())), "script"); n != 2 {
			t.Fatalf("script without ScriptsOnce: ran %d times, want 2", n)
		}
	})
	t.Run("redis-cluster", func(t *testing.T) {
		c := redistest.StartCluster(t) // its own: a shared one stalled would stall other tests
		x := stalled{reader: c.Client(t), nodes: c.NodeClients(t)}
		opts := func() *redis.UniversalOptions { return &redis.UniversalOptions{Addrs: c.Addrs()} }
		if n, err := x.runs(t, redisstore.NewClient(opts()), "script"); n != 1 || err == nil {
			t.Fatalf("script: ran %d times (%v), want once and a failure", n, err)
		}
		// Each node retries, and the cluster client retries the node.
		if n, _ := x.runs(t, redisstore.NewClient(opts()), "plain"); n < 2 {
			t.Fatalf("plain write: ran %d times, want it retried", n)
		}
	})
}

type stalled struct {
	reader redis.UniversalClient // sets up and reads the count
	nodes  []*redis.Client       // one per node
}

// runs makes one call of kind ("script" or "plain") with c that Redis
// receives and then stalls on for longer than c's read timeout, and
// answers how often the call ran and what the caller got. To be sure Redis
// has the call before the stall: every node is paused for writes (which
// queues scripts and writes), the call is awaited in the client list, then
// in one batch the pause ends and a slow script stalls Redis; the queued
// call runs after it, as any call written before a stall does.
func (x stalled) runs(t *testing.T, c redis.UniversalClient, kind string) (int64, error) {
	t.Helper()
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	key := "{once}:" + kind
	call := func() error { return c.Incr(ctx, key).Err() }
	if kind == "script" {
		call = func() error { return incr.Run(ctx, c, []string{key}).Err() }
	}
	for _, n := range x.nodes {
		if err := incr.Load(ctx, n).Err(); err != nil {
			t.Fatal(err)
		}
		if err := stall.Load(ctx, n).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for try := 1; ; try++ {
		if err := x.reader.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
		// Two pooled connections, as a busy server has: a retry then goes
		// out at once rather than dialling into the stall.
		var warm sync.WaitGroup
		for range 2 {
			warm.Go(func() { _ = c.BLPop(ctx, 100*time.Millisecond, "{once}:none").Err() })
		}
		warm.Wait()
		for _, n := range x.nodes {
			// Bounded; ended below as soon as the call is queued.
			if err := n.Do(ctx, "CLIENT", "PAUSE", 30_000, "WRITE").Err(); err != nil {
				t.Skipf("CLIENT PAUSE: %v (a real redis-server is needed)", err)
			}
		}
		done := make(chan error, 1)
		go func() { done <- call() }()
		queued := x.stallWhenQueued(t)
		err := <-done
		if !queued {
			t.Logf("try %d: the call was not queued before its timeout (a loaded machine); again", try)
			if try == 5 {
				t.Fatal("the call was never queued before its timeout")
			}
			continue
		}
		// The queued calls run right after the stall, together: once the
		// first shows, every one has run.
		var n int64
		for deadline := time.Now().Add(30 * time.Second); n == 0 && time.Now().Before(deadline); {
			n, _ = x.reader.Get(ctx, key).Int64()
		}
		return n, err
	}
}

// stallWhenQueued waits for a client blocked by the pause, then on every
// node ends the pause and, on the node holding the call, stalls Redis for
// 1.5 s. It reports whether the call was still queued when the pause ended
// (its client had not given up yet).
func (x stalled) stallWhenQueued(t *testing.T) bool {
	t.Helper()
	ctx := context.Background()
	blocked := func(list string) bool {
		for _, l := range strings.Split(list, "\n") {
			if f := clientFlags(l); strings.Contains(f["flags"], "b") && (f["cmd"] == "evalsha" || f["cmd"] == "incr") {
				return true
			}
		}
		return false
	}
	var at *redis.Client
	for deadline := time.Now().Add(10 * time.Second); at == nil && time.Now().Before(deadline); {
		for _, n := range x.nodes {
			if list, err := n.ClientList(ctx).Result(); err == nil && blocked(list) {
				at = n
			}
		}
	}
	queued := false
	for _, n := range x.nodes {
		if n != at {
			_ = n.Do(ctx, "CLIENT", "UNPAUSE").Err()
			continue
		}
		// One batch: Redis runs it before it reads from any other client.
		var list *redis.StringCmd
		_, err := n.Pipelined(ctx, func(p redis.Pipeliner) error {
			list = p.ClientList(ctx)
			p.Do(ctx, "CLIENT", "UNPAUSE")
			stall.EvalSha(ctx, p, nil, 1500)
			return nil
		})
		if err != nil {
			t.Fatalf("stall: %v", err)
		}
		queued = blocked(list.Val())
	}
	return queued
}

// clientFlags parses one line of CLIENT LIST.
func clientFlags(line string) map[string]string {
	f := map[string]string{}
	for _, kv := range strings.Fields(line) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f[k] = v
		}
	}
	return f
}

// TestScriptsOnceKeepsAnswers: through the hook, scripts alone and in a
// pipeline (StatusMany's way) answer as they would without it.
func TestScriptsOnceKeepsAnswers(t *testing.T) {
	srv := redistest.Start(t)
	c := redisstore.NewClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}})
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	if n, err := incr.Run(ctx, c, []string{"{answers}:n"}).Int64(); err != nil || n != 1 {
		t.Fatalf("script: %d %v", n, err)
	}
	var a, b *redis.Cmd
	var get *redis.StringCmd
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		a = incr.EvalSha(ctx, p, []string{"{answers}:n"})
		get = p.Get(ctx, "{answers}:n")
		b = incr.EvalSha(ctx, p, []string{"{answers}:n"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if x, _ := a.Int64(); x != 2 {
		t.Errorf("first script in the pipeline: %d", x)
	}
	if get.Val() != "2" {
		t.Errorf("read in the pipeline: %q", get.Val())
	}
	if x, _ := b.Int64(); x != 3 {
		t.Errorf("second script in the pipeline: %d", x)
	}
}
