package queue_test

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// fakeClockLine is a line on store with a fake clock.
func fakeClockLine(t *testing.T, store queue.Store) (*queue.Line, *clockwork.FakeClock) {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	return queue.NewLine(store, keys, queue.LineOptions{Clock: clock}), clock
}
