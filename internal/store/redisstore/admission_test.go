package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// TestAdmitterRestoresRoomsRedisLost: a Redis that comes back empty (new
// epoch) gets this server's rooms back; a room an operator deleted stays gone.
func TestAdmitterRestoresRoomsRedisLost(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	keys, _ := token.Generate()
	clock := clockwork.NewFakeClock()
	line := queue.NewLine(redisstore.New(rdb, "wr:"), keys, queue.LineOptions{Clock: clock})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, room := range []string{"kept", "deleted"} {
		if err := line.PutRoom(ctx, room, queue.DefaultSettings()); err != nil {
			t.Fatal(err)
		}
	}
	ticked := make(chan string, 100)
	adm := queue.NewAdmitter(line)
	adm.OnTick = func(room string, _ queue.Settings, _ queue.TickResult) { ticked <- room }
	done := make(chan struct{})
	go func() { defer close(done); _ = adm.Run(ctx) }()
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
	for len(ticked) > 0 {
		<-ticked
	}
	// A tick of "kept" after the flush means its loop found the room again.
	restored := false
	for i := 0; i < 50 && !restored; i++ {
		clock.Advance(time.Second)
		select {
		case room := <-ticked:
			restored = room == "kept"
		case <-time.After(200 * time.Millisecond): // the loops may still be on their way to the clock
		}
	}
	if _, err := line.StoredSettings(ctx, "kept"); err != nil {
		t.Fatalf("room lost with Redis's data not restored: %v", err)
	}
	if _, err := line.StoredSettings(ctx, "deleted"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Fatalf("deleted room came back: %v", err)
	}
	cancel()
	<-done
}
