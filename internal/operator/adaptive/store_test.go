package adaptive

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestClaimOncePerWindow: the first server to ask after the gap evaluates;
// a clock set back claims too rather than stall the room; a write for a
// claim another server has since replaced is dropped.
func TestClaimOncePerWindow(t *testing.T) {
	ctx := context.Background()
	r := redisStates{rdb: redistest.Shared(t).Client(t), prefix: redistest.Prefix(t)}
	gap := claimGap(time.Minute)
	t0 := time.UnixMilli(1_764_000_000_000)
	claim := func(at time.Time) bool {
		t.Helper()
		_, ok, err := r.claim(ctx, "sale", at, gap)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claim(t0) || claim(t0) || claim(t0.Add(30*time.Second)) {
		t.Fatal("a window was claimed twice")
	}
	if !claim(t0.Add(59_800 * time.Millisecond)) {
		t.Fatal("not claimed a poll's skew before the window ends")
	}
	if !claim(t0.Add(-time.Hour)) {
		t.Fatal("a clock set back stalls the room")
	}
	if ok, err := r.write(ctx, "sale", t0, State{Open: true}); err != nil || ok {
		t.Fatalf("stale write: %v, %v", ok, err)
	}
	reading := 0.8
	why := Why{Cause: CauseClosed, Reading: 0.25, Threshold: 0.5, Windows: 3}
	st := State{Open: true, Since: t0, Reason: "r", Why: why, Reading: &reading, ReadAt: t0, Below: 1, Transitions: 4}
	if ok, err := r.write(ctx, "sale", t0.Add(-time.Hour), st); err != nil || !ok {
		t.Fatalf("write: %v, %v", ok, err)
	}
	got, _, err := r.claim(ctx, "sale", t0.Add(-time.Hour), gap)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Open || !got.Since.Equal(t0) || got.Reason != "r" || got.Why != why || *got.Reading != 0.8 || got.Below != 1 || got.Transitions != 4 ||
		!got.EvaluatedAt.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("round trip: %+v", got)
	}
	if ttl := r.rdb.PTTL(ctx, r.key("sale")).Val(); ttl <= 0 || ttl > stateTTL {
		t.Fatalf("ttl %v", ttl)
	}
}
