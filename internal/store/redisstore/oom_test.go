package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// TestRedisOutOfMemoryCountsAsUnavailable: a real redis-server at its
// maxmemory with noeviction refuses the line's writes; that is "cannot use
// Redis" (degraded after two calls, as when it is unreachable), and the
// probe, which writes, keeps it so until writes go through again.
func TestRedisOutOfMemoryCountsAsUnavailable(t *testing.T) {
	needRealRedis(t)
	srv := redistest.Start(t)
	clock := clockwork.NewFakeClock()
	avail := queue.NewAvailability(clock, nil)
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{srv.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	rdb.AddHook(redisstore.Hook(avail))
	admin := srv.Client(t) // outside the hook: the test's own knobs do not count
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	store := redisstore.New(rdb, redistest.Prefix(t))
	line := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	ctx := context.Background()
	if err := line.PutRoom(ctx, "sale", queue.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := line.Enter(ctx, "sale", "v:before"); err != nil {
		t.Fatal(err)
	}

	for _, kv := range [][2]string{{"maxmemory-policy", "noeviction"}, {"maxmemory", "1"}} {
		if err := admin.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = line.Enter(ctx, "sale", "v:oom-1")
	if !redisstore.OutOfMemory(err) || !redisstore.Unreachable(err) {
		t.Fatalf("enter at maxmemory: %v; want an OOM refusal classed as unavailable", err)
	}
	if avail.Degraded() {
		t.Fatal("degraded after one failure")
	}
	if _, _, err := line.Enter(ctx, "sale", "v:oom-2"); err == nil {
		t.Fatal("second enter at maxmemory succeeded")
	}
	if !avail.Degraded() {
		t.Fatalf("not degraded after two refused writes: %+v", avail.State())
	}
	// Reads still work, but the probe writes, so it does not recover.
	for range 4 {
		avail.RecordProbe(func() error { _, err := store.Probe(ctx); return err }())
	}
	if !avail.Degraded() {
		t.Fatalf("recovered while Redis still refuses writes: %+v", avail.State())
	}

	if err := admin.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		avail.RecordProbe(func() error { _, err := store.Probe(ctx); return err }())
	}
	if avail.Degraded() {
		t.Fatalf("still degraded once writes go through: %+v", avail.State())
	}
	clock.Advance(time.Second)
	if _, _, err := line.Enter(ctx, "sale", "v:after"); err != nil {
		t.Fatal(err)
	}
}
