package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/redistest"
	"github.com/waitroom/waitroom/queue/token"
)

// TestAdmitterRestoresRoomsRedisLost: a Redis that comes back empty (new
// epoch) gets this server's rooms back; a room an operator deleted stays gone.
func TestAdmitterRestoresRoomsRedisLost(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	keys, _ := token.Generate()
	clock := clockwork.NewFakeClock()
	line := queue.NewLine(queue.NewRedisStore(rdb, "wr:"), keys, queue.LineOptions{Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, room := range []string{"kept", "deleted"} {
		if err := line.PutRoom(ctx, room, queue.DefaultSettings()); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = queue.NewAdmitter(line).Run(ctx) }()
	// The list loop and two room loops wait on the clock once they have run.
	if err := clock.BlockUntilContext(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := line.DeleteRoom(ctx, "deleted"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		clock.Advance(time.Second)
		if _, err := line.Store().GetRoom(ctx, "kept"); err == nil {
			break
		}
		_ = clock.BlockUntilContext(ctx, 2)
	}
	if _, err := line.Store().GetRoom(ctx, "kept"); err != nil {
		t.Fatalf("room lost with Redis's data not restored: %v", err)
	}
	if _, err := line.Store().GetRoom(ctx, "deleted"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Fatalf("deleted room came back: %v", err)
	}
	cancel()
	<-done
}
