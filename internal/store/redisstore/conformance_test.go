package redisstore_test

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/conformance"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// TestConformance runs the line's behaviour against the Lua scripts on a
// real redis-server (redistest's; miniredis when it is missing, unless
// WAITROOM_REQUIRE_REDIS=1), on a real 3-master Redis Cluster and on
// miniredis, which embedded mode runs.
func TestConformance(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) {
		redistest.SkipShortOrFallback(t)
		conformance.Run(t, func(t *testing.T) func() queue.Store {
			rdb, prefix := redistest.Shared(t).Client(t), redistest.Prefix(t)
			return func() queue.Store { return redisstore.New(rdb, prefix) }
		})
	})
	t.Run("redis-cluster", func(t *testing.T) {
		conformance.Run(t, func(t *testing.T) func() queue.Store {
			rdb, prefix := redistest.SharedCluster(t).Client(t), redistest.Prefix(t)
			return func() queue.Store { return redisstore.New(rdb, prefix) }
		})
	})
	t.Run("miniredis", func(t *testing.T) {
		conformance.Run(t, func(t *testing.T) func() queue.Store {
			m := miniredis.RunT(t)
			// Generous: a behaviour test is not about the pool, and miniredis
			// under -race on a loaded machine answers 1,000 concurrent enters slowly.
			// No retry after a read timeout: miniredis still runs the timed-out
			// script, so a retried tick of 8,100 admissions (over 3 s on a
			// loaded machine) ran twice and answered the second, empty one.
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), PoolTimeout: time.Minute,
				ReadTimeout: time.Minute, MaxRetries: -1})
			t.Cleanup(func() { _ = rdb.Close() })
			return func() queue.Store { return redisstore.New(rdb, "wr:") }
		}, conformance.SkipHeavy())
	})
}
