package queue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// PositionsOptions tune Positions; zero values take the defaults noted.
type PositionsOptions struct {
	Clock  clockwork.Clock // default real
	Logger *slog.Logger    // default slog.Default()
	// Poll is the pause after a log read that did not come back full
	// (default 250ms): a view lags the log by at most about that. Reads do
	// not block: a blocked read would hold one of the store's pooled
	// connections per room.
	Poll time.Duration
	// CheckEvery is how often an idle view compares itself with the log's
	// head, and the measured rate is read (default 1s).
	CheckEvery time.Duration
	// IdleAfter stops following a room nobody asked about for this long (default 1m).
	IdleAfter time.Duration
}

func (o PositionsOptions) withDefaults() PositionsOptions {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = time.Second
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = time.Minute
	}
	return o
}

// Positions follows the change log of every room this server has waiters
// of (one reader per room), so their positions cost the store nothing per
// waiter: per room and server, a log read every Poll (more often only to
// catch up on a backlog), one head check and one rate read a second.
type Positions struct {
	store Changes
	o     PositionsOptions

	mu    sync.Mutex
	ctx   context.Context // Run's; nil before Run
	rooms map[string]*followed
}

type followed struct {
	view  *RoomView
	used  time.Time // last Watch
	rate  float64
	rated bool // rate was read since the room was followed
	// running: a goroutine follows the room.
	running bool
}

// NewPositions returns a follower of store's change logs; start it with Run.
func NewPositions(store Changes, o PositionsOptions) *Positions {
	return &Positions{store: store, o: o.withDefaults(), rooms: map[string]*followed{}}
}

// Run follows the watched rooms until ctx ends.
func (p *Positions) Run(ctx context.Context) error {
	p.mu.Lock()
	p.ctx = ctx
	for room, f := range p.rooms {
		p.start(room, f)
	}
	p.mu.Unlock()
	<-ctx.Done()
	return nil
}

// start runs room's reader unless it runs; p.mu is held.
func (p *Positions) start(room string, f *followed) {
	if f.running || p.ctx == nil || p.ctx.Err() != nil {
		return
	}
	f.running = true
	go p.follow(p.ctx, room, f)
}

// Watch says this server has waiters in room: it is followed from now on,
// until nobody asks for IdleAfter.
func (p *Positions) Watch(room string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.rooms[room]
	if f == nil {
		f = &followed{view: NewRoomView(p.store, room)}
		p.rooms[room] = f
	}
	f.used = p.o.Clock.Now()
	p.start(room, f)
}

// Position is the waiter's position in room from its score, the number
// waiting and the measured rate; ok is false when the room's view is not
// synced or the score no longer waits: read the ticket from the store then.
func (p *Positions) Position(room string, score float64) (pos, waiting int64, rate float64, ok bool) {
	p.mu.Lock()
	f := p.rooms[room]
	rated := false
	if f != nil {
		rate, rated = f.rate, f.rated
	}
	p.mu.Unlock()
	if f == nil || !rated {
		return 0, 0, 0, false
	}
	pos, waiting, ok = f.view.Position(score)
	return pos, waiting, rate, ok
}

// Unsync makes room's view read the line afresh (a room changed, the
// store came back empty).
func (p *Positions) Unsync(room string) {
	p.mu.Lock()
	f := p.rooms[room]
	p.mu.Unlock()
	if f != nil {
		f.view.Unsync()
	}
}

// follow is one room's reader: resync when needed, read the log, check the
// head and read the rate every CheckEvery, stop when idle.
func (p *Positions) follow(ctx context.Context, room string, f *followed) {
	defer func() {
		p.mu.Lock()
		f.running = false
		p.mu.Unlock()
	}()
	backoff := 100 * time.Millisecond
	var checked time.Time
	for ctx.Err() == nil {
		now := p.o.Clock.Now()
		p.mu.Lock()
		if now.Sub(f.used) > p.o.IdleAfter {
			delete(p.rooms, room)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		var err error
		switch {
		case !f.view.Synced():
			err = f.view.Resync(ctx)
		case now.Sub(checked) >= p.o.CheckEvery:
			checked = now
			if err = f.view.Check(ctx); err == nil {
				var rate float64
				if rate, err = p.store.Rate(ctx, room); err == nil {
					p.mu.Lock()
					f.rate, f.rated = rate, true
					p.mu.Unlock()
				}
			}
		default:
			// At most one read per Poll, however fast the line changes,
			// unless a read came back full (a backlog to catch up on).
			var n int
			if n, err = f.view.Step(ctx, 0); err == nil && n < logBatch {
				select {
				case <-ctx.Done():
					return
				case <-p.o.Clock.After(p.o.Poll):
				}
			}
		}
		if err == nil {
			backoff = 100 * time.Millisecond
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, ErrUnavailable) {
			p.o.Logger.Warn("queue: positions", "room", room, "err", err)
		}
		f.view.Unsync()
		select {
		case <-ctx.Done():
			return
		case <-p.o.Clock.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
