package adaptive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestStatesOnCluster: rooms' activation states, spread over a Redis
// Cluster's shards, are claimed once per window and written back.
func TestStatesOnCluster(t *testing.T) {
	ctx := context.Background()
	r := redisStates{rdb: redistest.SharedCluster(t).Client(t), prefix: redistest.Prefix(t)}
	gap := claimGap(time.Minute)
	t0 := time.UnixMilli(1_764_000_000_000)
	for i := range 12 {
		room := fmt.Sprintf("room-%d", i)
		if _, ok, err := r.claim(ctx, room, t0, gap); err != nil || !ok {
			t.Fatalf("%s: first claim %v %v", room, ok, err)
		}
		if _, ok, err := r.claim(ctx, room, t0, gap); err != nil || ok {
			t.Fatalf("%s: claimed twice in one window: %v", room, err)
		}
		if ok, err := r.write(ctx, room, t0, State{Open: true, Reason: room}); err != nil || !ok {
			t.Fatalf("%s: write %v %v", room, ok, err)
		}
		got, _, err := r.claim(ctx, room, t0, gap)
		if err != nil || !got.Open || got.Reason != room {
			t.Fatalf("%s: read back %+v %v", room, got, err)
		}
	}
}
