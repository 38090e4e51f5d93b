package queue_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/queue"
)

// TestDrillStandsAgainstAnOlderProbe: the admin API forces a drill on its
// server, then writes it to Redis for the others. A probe that read Redis
// before that write, and returns after it, must not end the drill (it did:
// for up to a probe interval the server was not degraded, and an intent
// sent then was refused `not_degraded`). The next probe's reading stands:
// a drill ended on another server ends here.
func TestDrillStandsAgainstAnOlderProbe(t *testing.T) {
	clock := clockwork.NewFakeClock()
	a := queue.NewAvailability(clock, slog.New(slog.DiscardHandler))
	started, reading := make(chan struct{}), make(chan *bool)
	probe := func(ctx context.Context) (*bool, error) {
		select {
		case started <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case on := <-reading:
			return on, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, probe) }()
	t.Cleanup(func() { cancel(); <-done })
	// step runs one probe that reads on, calling during while it is in flight,
	// and returns once Run has applied the reading and waits for the next.
	step := func(on *bool, during func()) {
		t.Helper()
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		<-started
		during()
		reading <- on
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}

	yes := true
	step(nil, func() { a.Force(&yes) }) // the probe read Redis before the drill reached it
	if !a.Degraded() {
		t.Fatal("a probe that read Redis before the drill was written ended the drill")
	}
	step(&yes, func() {}) // Redis has it now
	if !a.Degraded() {
		t.Fatal("the drill ended with Redis saying it is on")
	}
	step(nil, func() {}) // another server ended it
	if a.Degraded() {
		t.Fatal("a drill ended on another server still holds here")
	}
}
