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

// failingRestore is memstore whose first restores fail, as a script sent
// once fails on a connection the restarted Redis had closed.
type failingRestore struct {
	*memstore.Store
	fails atomic.Int64
}

func (s *failingRestore) RestoreRoom(ctx context.Context, room string, st queue.Settings, now time.Time) (bool, error) {
	if s.fails.Add(-1) >= 0 {
		return false, errors.New("fake: connection reset")
	}
	return s.Store.RestoreRoom(ctx, room, st, now)
}

// TestAFailedRestoreIsTriedAgain: Redis came back empty and the first
// attempt to put the room back failed. The server must not take the new
// epoch as seen: it tries again until the room is back.
func TestAFailedRestoreIsTriedAgain(t *testing.T) {
	store := &failingRestore{Store: memstore.New()}
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClock()
	line := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	if err := line.PutRoom(ctx, "sale", queue.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	adm := queue.NewAdmitter(line)
	wg.Go(func() { _ = adm.Run(ctx) })
	settle := func() {
		t.Helper()
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second) // -race on a loaded machine
		defer wcancel()
		if err := clock.BlockUntilContext(wctx, 2); err != nil {
			t.Fatalf("the loops never waited on the clock: %v", err)
		}
	}
	settle()

	store.fails.Store(2)
	store.Flush() // Redis restarted without its data
	for i := 0; i < 20; i++ {
		clock.Advance(time.Second)
		settle()
		if _, err := store.GetRoom(ctx, "sale"); err == nil {
			if store.fails.Load() >= 0 {
				t.Fatalf("restored with %d failures still to come", store.fails.Load())
			}
			return
		}
	}
	t.Fatal("the room was never put back after its restore failed")
}
