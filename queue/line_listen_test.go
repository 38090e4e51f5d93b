package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// TestRoomChangeMakesOtherServersReadFreshSettings: a server that cached a
// room's settings reads the new ones as soon as it hears of a change made
// on another server, so pages it pushes because of the change (sold out,
// undone) show it, rather than the cached settings for up to a second.
func TestRoomChangeMakesOtherServersReadFreshSettings(t *testing.T) {
	store := memstore.New()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClock() // stands still: the cache never ages
	a := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	b := queue.NewLine(store, keys, queue.LineOptions{Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := queue.DefaultSettings()
	if err := a.PutRoom(ctx, "drop", s); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Settings(ctx, "drop"); err != nil || got.SoldOut {
		t.Fatalf("b's first read: %+v %v", got.SoldOut, err)
	}
	heard := make(chan queue.Settings, 16)
	go func() {
		_ = b.Listen(ctx, func(string, []queue.Admitted) {}, func(room string) {
			got, _ := b.Settings(ctx, room) // what a push for this change reads
			heard <- got
		})
	}()
	s.SoldOut = true
	// The listener starts on its own goroutine: announce until it hears.
	for {
		if err := a.PutRoom(ctx, "drop", s); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-heard:
			if !got.SoldOut {
				t.Fatal("b read its cached settings after hearing of the change")
			}
			return
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("b never heard of the change")
		}
	}
}
