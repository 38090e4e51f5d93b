// Package adaptive opens and closes the line of rooms with activation
// "adaptive" by reading a load signal once per window: the line opens when
// checkout gets busy and closes again when it has been cool for a while.
package adaptive

import (
	"context"
	"log/slog"
	"maps"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

// Rooms lists rooms and reads their settings; queue.Store is one.
type Rooms interface {
	ListRooms(ctx context.Context) ([]string, error)
	GetRoom(ctx context.Context, room string) (queue.Settings, error)
}

// Transition is one opening or closing of a room's line.
type Transition struct {
	Room    string
	Open    bool
	Reading float64
	Reason  string
	At      time.Time
}

// Options are the Controller's optional parts; zero values pick real ones.
type Options struct {
	Clock  clockwork.Clock
	Logger *slog.Logger
	// Signal reads rooms' load; DefaultSignals(nil) when nil.
	Signal Signal
	// Poll is how often rooms and their states are re-read from Redis, so a
	// new room, a change of settings or another server's evaluation shows
	// within it. 1 s when 0: the shortest window.
	Poll time.Duration
	// ReadTimeout bounds one signal read; 5 s when 0, and never more than
	// 80 % of the room's window.
	ReadTimeout time.Duration
	// OnTransition hears every opening and closing, on the one server that
	// evaluated it (metrics).
	OnTransition func(Transition)
}

// Controller evaluates every adaptive room once per window across all
// servers, keeps the outcome in Redis, and answers Open from memory.
type Controller struct {
	states       redisStates
	rooms        Rooms
	signal       Signal
	clock        clockwork.Clock
	log          *slog.Logger
	poll         time.Duration
	readTimeout  time.Duration
	onTransition func(Transition)

	// mem is every adaptive room's state as last read or written, replaced
	// whole after each poll: Open is on the hot path of enter, so it reads
	// without a lock.
	mem atomic.Pointer[map[string]State]
}

// New returns a controller keeping states under prefix (the store's, e.g.
// "wr:") in rdb. Call Run to start it.
func New(rdb redis.UniversalClient, prefix string, rooms Rooms, o Options) *Controller {
	c := &Controller{states: redisStates{rdb: rdb, prefix: prefix}, rooms: rooms, signal: o.Signal,
		clock: o.Clock, log: o.Logger, poll: o.Poll, readTimeout: o.ReadTimeout, onTransition: o.OnTransition}
	if c.signal == nil {
		c.signal = DefaultSignals(nil)
	}
	if c.clock == nil {
		c.clock = clockwork.NewRealClock()
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.poll <= 0 {
		c.poll = time.Second
	}
	if c.readTimeout <= 0 {
		c.readTimeout = 5 * time.Second
	}
	empty := map[string]State{}
	c.mem.Store(&empty)
	return c
}

// Open reports whether room's line is open: queue.LineOptions.LineOpen.
// A room this server has not read yet (the first poll after start, or a
// room created within the last poll) counts as open: until the controller
// knows, the line is the side that protects checkout.
func (c *Controller) Open(room string) bool {
	st, ok := (*c.mem.Load())[room]
	return !ok || st.Open
}

// State returns room's activation for the dashboard and metrics; false when
// room is not an adaptive room this server knows.
func (c *Controller) State(room string) (State, bool) {
	st, ok := (*c.mem.Load())[room]
	return st, ok
}

// States returns every adaptive room's activation this server knows.
func (c *Controller) States() map[string]State {
	return maps.Clone(*c.mem.Load())
}
