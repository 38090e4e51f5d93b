package queue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// downStore is a store whose room reads fail while down is set, as a
// Redis that is gone fails them.
type downStore struct {
	queue.Store
	down atomic.Bool
}

func (s *downStore) GetRoom(ctx context.Context, room string) (queue.Settings, error) {
	if s.down.Load() {
		return queue.Settings{}, errors.New("fake: connection refused")
	}
	return s.Store.GetRoom(ctx, room)
}

// TestAServerThatCannotReadRedisAdmitsNoRoom: waitroom_admitter_leases
// (Admitting) counts the rooms a server admits; one whose Redis is gone
// admits none, whatever lease it held, and counts the room again once
// Redis answers and it holds the lease.
func TestAServerThatCannotReadRedisAdmitsNoRoom(t *testing.T) {
	store := &downStore{Store: memstore.New()}
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClock()
	line := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	s := queue.DefaultSettings()
	if err := line.PutRoom(ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	adm := queue.NewAdmitter(line)
	wg.Go(func() { _ = adm.Run(ctx) })
	settle := func() {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		if err := clock.BlockUntilContext(wctx, 2); err != nil {
			t.Fatalf("the loops never waited on the clock: %v", err)
		}
	}
	settle()
	if n := adm.Admitting(); n != 1 {
		t.Fatalf("with Redis: admitting %d rooms, want 1", n)
	}
	store.down.Store(true)
	clock.Advance(time.Second)
	settle()
	if n := adm.Admitting(); n != 0 {
		t.Fatalf("Redis gone: admitting %d rooms, want 0", n)
	}
	store.down.Store(false)
	clock.Advance(time.Second)
	settle()
	if n := adm.Admitting(); n != 1 {
		t.Fatalf("Redis back: admitting %d rooms, want 1", n)
	}
}
