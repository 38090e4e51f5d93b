package conformance

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// T0 is where a fixture's fake clock starts.
var T0 = t0

// Fixture is the suite's line on one store, for a store's own tests beside
// Run (internal/store/redisstore's): a fake clock at T0, fresh signing keys, and a
// jitter of half its bound unless one is given.
type Fixture struct {
	Line  *queue.Line
	Store queue.Store
	Clock *clockwork.FakeClock
	Keys  *token.Keyset
	f     *fixture
}

// NewFixture gives a line, as one server, on the store server opens.
func NewFixture(t *testing.T, server func() queue.Store, jitter func(time.Duration) time.Duration) *Fixture {
	t.Helper()
	f := newFixtureOn(t, server, jitter)
	return &Fixture{Line: f.line, Store: f.store, Clock: f.clock, Keys: f.keys, f: f}
}

// Room stores a room of default settings after edit, and returns them.
func (x *Fixture) Room(t *testing.T, name string, edit func(*queue.Settings)) queue.Settings {
	t.Helper()
	return x.f.room(t, name, edit)
}

// Enter enters who (an identity) in room.
func (x *Fixture) Enter(t *testing.T, room, who string) queue.Ticket {
	t.Helper()
	return x.f.enter(t, room, who)
}

// Status reads tk again, as its owner.
func (x *Fixture) Status(t *testing.T, room string, tk queue.Ticket) queue.Ticket {
	t.Helper()
	return x.f.status(t, room, tk)
}

// Tick runs one admission step of room.
func (x *Fixture) Tick(t *testing.T, room string) queue.TickResult {
	t.Helper()
	return x.f.tick(t, room)
}

// BlockFastTrack fills room's line so later entries wait for a tick.
func (x *Fixture) BlockFastTrack(t *testing.T, room string) {
	t.Helper()
	x.f.blockFastTrack(t, room)
}
