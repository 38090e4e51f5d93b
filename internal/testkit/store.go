package testkit

import (
	"context"
	"testing"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// LineStore is the store a test's line runs on, with a ping for /readyz:
// the memory store under -short (the fast tier needs no service), else the
// shared redis-server (the miniredis fallback where none is installed),
// under the test's own prefix. Tests that need Redis itself (its hooks, its
// death) use internal/testkit/redistest directly.
func LineStore(tb testing.TB) (queue.Store, func(context.Context) error) {
	tb.Helper()
	if testing.Short() {
		return memstore.New(), func(context.Context) error { return nil }
	}
	rdb := redistest.Shared(tb).Client(tb)
	return redisstore.New(rdb, redistest.Prefix(tb)), func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
}
