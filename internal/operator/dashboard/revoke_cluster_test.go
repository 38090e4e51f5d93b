package dashboard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestRevocationsOnCluster: sign-outs recorded by one server are seen by
// another on a Redis Cluster, whichever shard each session's key lands on.
func TestRevocationsOnCluster(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.SharedCluster(t).Client(t)
	prefix := redistest.Prefix(t)
	a, b := dashboard.NewRedisRevocations(rdb, prefix), dashboard.NewRedisRevocations(rdb, prefix)
	for i := range 12 {
		id := fmt.Sprintf("session-%d", i)
		if revoked, err := b.Revoked(ctx, id); err != nil || revoked {
			t.Fatalf("%s revoked before sign-out: %v", id, err)
		}
		if err := a.Revoke(ctx, id, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if revoked, err := b.Revoked(ctx, id); err != nil || !revoked {
			t.Fatalf("%s signed out on a, not on b: %v", id, err)
		}
	}
}
