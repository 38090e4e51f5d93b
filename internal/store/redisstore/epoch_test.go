package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// TestEpochNoticesAnOlderSnapshot: a redis-server restarted from an RDB
// saved before the clock moved on gives a server that read the later clock
// Rewound and a new epoch; a second server, which did not notice it first,
// sees the new epoch. A restart that kept everything (SAVE right before)
// is not a loss.
func TestEpochNoticesAnOlderSnapshot(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	a, b := redisstore.New(rs.Client(t), prefix), redisstore.New(rs.Client(t), prefix)
	ctx := context.Background()
	epoch := func(s *redisstore.Store) queue.Epoch {
		t.Helper()
		var e queue.Epoch
		var err error
		// The client reconnects after a restart: a bounded retry, not a wait.
		for range 50 {
			if e, err = s.Epoch(ctx); err == nil {
				return e
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("epoch: %v", err)
		return e
	}
	first := epoch(a)
	if e := epoch(b); e.ID != first.ID || e.Rewound {
		t.Fatalf("second server: %+v, want %s", e, first.ID)
	}
	rdb := rs.Snapshot(t)
	epoch(a)
	epoch(b)

	rs.RestartFrom(t, rdb) // back to before both servers' last read
	got := epoch(a)
	if !got.Rewound || got.ID == first.ID || got.Clock > got.Seen {
		t.Fatalf("after a restart from an older RDB: %+v (epoch before %s)", got, first.ID)
	}
	if e := epoch(b); e.Rewound || e.ID != got.ID {
		t.Fatalf("the other server after the renewal: %+v, want %s not rewound", e, got.ID)
	}
	if e := epoch(a); e.Rewound || e.ID != got.ID {
		t.Fatalf("the next read: %+v", e)
	}

	// Saved with everything: a restart from it lost nothing.
	rdb = rs.Snapshot(t)
	rs.RestartFrom(t, rdb)
	if e := epoch(a); e.Rewound || e.ID != got.ID {
		t.Fatalf("after a restart from an up-to-date RDB: %+v", e)
	}
}

// TestTickNoticesAnOlderRoom: admissions after the snapshot move the room's
// clock, so a room restored from before them is noticed at the next tick
// (the next Epoch starts a new one), even when the deployment's clock was
// last read before the snapshot.
func TestTickNoticesAnOlderRoom(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	s := redisstore.New(rs.Client(t), prefix)
	ctx := context.Background()
	st := queue.DefaultSettings()
	if err := s.PutRoom(ctx, "sale", st); err != nil {
		t.Fatal(err)
	}
	e, err := s.Epoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tick := func() {
		t.Helper()
		for range 50 { // reconnecting after the restart
			if _, err = s.Tick(ctx, "sale", &st, now, nil, nil); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("tick: %v", err)
	}
	tick()
	rdb := rs.Snapshot(t)
	tick()
	rs.RestartFrom(t, rdb)
	tick()
	got, err := s.Epoch(ctx)
	if err != nil || !got.Rewound || got.ID == e.ID {
		t.Fatalf("epoch after a tick on the older room: %+v %v", got, err)
	}
}
