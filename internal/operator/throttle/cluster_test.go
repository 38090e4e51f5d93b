package throttle_test

import (
	"testing"

	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestFailuresCountedOnCluster: two servers on a Redis Cluster share the
// count, for clients whose keys land on different shards.
func TestFailuresCountedOnCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	o := limits(3)
	o.Prefix = redistest.Prefix(t)
	a, b := throttle.New(rdb, "admin", o), throttle.New(rdb, "admin", o)
	for _, client := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "2001:db8::/64"} {
		if got := failUntilRefused(t, a, client); got != 3 {
			t.Fatalf("%s: %d failures on server a before refused, want 3", client, got)
		}
		if _, ok := b.Failed(ctx, client); ok {
			t.Fatalf("%s: server b let through a client refused on a", client)
		}
	}
}
