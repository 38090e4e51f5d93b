package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// TestScrapeLapsedSlots: a slot freed because its visitor never came shows
// as a no-show, by room and reason, from Redis.
func TestScrapeLapsedSlots(t *testing.T) {
	ctx := context.Background()
	store := redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t))
	s := queue.DefaultSettings()
	if err := store.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if tk, err := store.Enter(ctx, "sale", &s, queue.AdmitLine, "v:a", "ticket-a", now, 0, queue.EntryProof{}); err != nil || tk.State != vocab.StateAdmitted {
		t.Fatalf("enter: %+v %v", tk, err)
	}
	later := now.Add(time.Duration(s.ArrivalWindowS) * time.Second)
	if r, err := store.Tick(ctx, "sale", &s, later, nil, nil); err != nil || r.NoShows != 1 {
		t.Fatalf("tick: %+v %v", r, err)
	}
	_, reg := newMetrics(t, metrics.Sources{Rooms: store, Now: func() time.Time { return later }})
	for reason, want := range map[string]float64{"no_show": 1, "idle": 0} {
		if v, ok := value(t, reg, "waitroom_room_slots_lapsed_total", "room", "sale", "reason", reason); !ok || v != want {
			t.Errorf("lapsed %s: %v %v, want %v", reason, v, ok, want)
		}
	}
	if v, _ := value(t, reg, "waitroom_room_expired_total", "room", "sale"); v != 1 {
		t.Errorf("expired_total %v, want 1 (the no-show)", v)
	}
}
