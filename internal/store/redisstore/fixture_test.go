package redisstore_test

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/conformance"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

var t0 = conformance.T0

// fixture is the behaviour suite's (conformance.Fixture) under the names
// this package's tests use.
type fixture struct {
	*conformance.Fixture
	line  *queue.Line
	store queue.Store
	clock *clockwork.FakeClock
	keys  *token.Keyset
}

// newFixture gives a line on the shared real Redis, with its own key prefix,
// a fake clock and a jitter that is fixed unless the test sets one.
func newFixture(t *testing.T, prefix string, jitter func(time.Duration) time.Duration) *fixture {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	if prefix == "" {
		prefix = redistest.Prefix(t)
	}
	c := conformance.NewFixture(t, func() queue.Store { return redisstore.New(rdb, prefix) }, jitter)
	return &fixture{Fixture: c, line: c.Line, store: c.Store, clock: c.Clock, keys: c.Keys}
}

func (f *fixture) room(t *testing.T, name string, edit func(*queue.Settings)) queue.Settings {
	return f.Room(t, name, edit)
}

func (f *fixture) enter(t *testing.T, room, who string) queue.Ticket { return f.Enter(t, room, who) }

func (f *fixture) status(t *testing.T, room string, tk queue.Ticket) queue.Ticket {
	return f.Status(t, room, tk)
}

func (f *fixture) tick(t *testing.T, room string) queue.TickResult { return f.Tick(t, room) }

func (f *fixture) blockFastTrack(t *testing.T, room string) { f.BlockFastTrack(t, room) }
