package queue

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// DefaultPresentEvery is how often the waiters' sign of life is written:
// one snapshot per room of the tickets with an open connection or a poll
// on this server (Line.Present), whatever their number, well within
// MinAbandonAfterS. A waiter that leaves the snapshot (its connections
// closed, its polls stopped) is marked seen (Line.Alive) at the next one,
// so it is dropped abandon_after_s after that: at most two of these late.
const DefaultPresentEvery = 5 * time.Second

// firstFresh is how long a waiting ticket this server entered answers its
// connection's first message, as the enter answered it (Waiters.first):
// a page opens its connection right after its enter, and a status read
// then would tell what the enter just did.
const firstFresh = 2 * time.Second

// knownIdle drops a ticket nobody asked about for this long.
const knownIdle = time.Minute

// positionSource gives positions from the room's change log (Positions).
type positionSource interface {
	Watch(room string)
	Position(room string, score float64) (pos, waiting int64, rate float64, ok bool)
}

// waiterLine is what Waiters needs of the line (*Line).
type waiterLine interface {
	Settings(ctx context.Context, room string) (Settings, error)
	Status(ctx context.Context, room, ticketID, identity string) (Ticket, Settings, error)
	StatusMany(ctx context.Context, room string, ids []string) ([]Ticket, Settings, error)
	Leave(ctx context.Context, room, ticketID, identity string) error
	Alive(ctx context.Context, room string, ids []string) error
	Present(ctx context.Context, room, server string, open []string) error
	Now() time.Time
}

// aliveWriter writes the waiters' sign of life: a snapshot of them per
// room, and the mark of those that left it since the last one.
type aliveWriter interface {
	Alive(ctx context.Context, room string, ids []string) error
	Present(ctx context.Context, room, server string, open []string) error
}

// WaitersOptions tune Waiters; zero values take the defaults.
type WaitersOptions struct {
	Logger *slog.Logger // default slog.Default()
	// PresentEvery is how often the sign of life is written (default
	// DefaultPresentEvery); tests shorten it.
	PresentEvery time.Duration
}

// Waiters is this server's view of its waiting tickets: each as last read
// from the store, with its position, the number waiting and the rate from
// the change log (Positions). Status reads, polls and push updates of a
// waiting ticket are answered from it; the store is read only when the
// ticket may have changed: its first read here, an admission heard, its
// score gone from the line (admitted, abandoned, left elsewhere), a room
// change, or the view not synced. It also writes the sign of life of the
// waiters with an open connection or a recent poll on this server: one
// snapshot per room and interval (waiters_life.go).
type Waiters struct {
	line  waiterLine
	pos   positionSource
	alive aliveWriter
	log   *slog.Logger
	every time.Duration
	// run follows the change logs (Positions.Run); nil in unit tests.
	run func(ctx context.Context) error
	// listen hears admissions and room changes (Line.Listen); nil in unit tests.
	listen func(ctx context.Context, onAdmit func(string, []Admitted), onRoom func(string)) error
	// open lists the tickets with a connection on this server, by room
	// (WaitersHooks.Open); server names this process's snapshots.
	open   func() map[string][]string
	server string
	// shown is each room's last snapshot written (flush's goroutine only).
	shown map[string]map[string]struct{}

	// gen orders reads and invalidations: a read that started before a
	// ticket was invalidated does not make it known again.
	gen atomic.Int64

	mu    sync.Mutex
	known map[string]map[string]*knownTicket // room -> ticket
	// polled are the tickets answered from the view since the last flush,
	// by room: their sign of life is the next snapshot.
	polled map[string]map[string]struct{}
	// roomStale is the generation of each room's last change (forgetRoom),
	// so a read of a ticket not yet known that started before it is not
	// kept; entries older than the last flush but one are dropped.
	roomStale map[string]int64
	flushed   int64 // the generation at the last flush
}

type knownTicket struct {
	t       Ticket
	stale   int64 // generation of the last invalidation; 0: none
	used    time.Time
	invalid bool // read it from the store next time
	// entered is this server's enter answer for the ticket, kept until
	// its connection's first message or firstFresh (enteredAt).
	entered   *Ticket
	enteredAt time.Time
	// best is the lowest position this ticket was given, 0 before any. The
	// view may lag the store by a log read: a position read from the store
	// can be ahead of the view's next answer, and a place never goes back.
	best int64
	// waiting is the number waiting last told, for a stale answer.
	waiting int64
}

// NewWaiters returns the view of line's waiters; start it with Run.
func NewWaiters(l *Line, o WaitersOptions) *Waiters {
	w := newWaiters(l, l.positions, o)
	w.run, w.listen = l.positions.Run, l.Listen
	return w
}

func newWaiters(l waiterLine, pos positionSource, o WaitersOptions) *Waiters {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PresentEvery <= 0 {
		o.PresentEvery = DefaultPresentEvery
	}
	return &Waiters{line: l, pos: pos, alive: l, log: o.Logger, every: o.PresentEvery, server: RandomID(),
		shown: map[string]map[string]struct{}{}, known: map[string]map[string]*knownTicket{},
		polled: map[string]map[string]struct{}{}, roomStale: map[string]int64{}}
}

// Gen is the view's generation: take it before an enter whose answer is
// kept (Entered).
func (w *Waiters) Gen() int64 { return w.gen.Load() }

// local returns the ticket's update from the view, or false when the store
// must be read: also when identity (unless empty) does not own it.
func (w *Waiters) local(room, id, identity string, now time.Time) (Ticket, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.known[room][id]
	if k != nil && identity != "" && k.t.Identity != identity {
		return Ticket{}, false
	}
	if k != nil && !k.invalid && k.t.State == vocab.StateAdmitted && w.line.Now().Before(k.t.ExpiresAt) {
		// Admitted as an admission's event told: its first update after
		// it, once (a later one reads: completed, left).
		k.invalid = true
		t := k.t
		_, t.Waiting, t.Rate, _ = w.pos.Position(room, t.Score)
		return t, true
	}
	if k == nil || k.invalid || k.t.State != vocab.StateWaiting {
		return Ticket{}, false
	}
	k.used = now
	pos, waiting, rate, ok := w.pos.Position(room, k.t.Score)
	if !ok {
		return Ticket{}, false
	}
	if k.best > 0 && pos > k.best {
		pos = k.best
	}
	if pos > 0 {
		k.best = pos
	}
	k.waiting = waiting
	t := k.t
	t.Position, t.Waiting, t.Rate = pos, waiting, rate
	return t, true
}

// remember keeps tickets read from the store at generation gen.
func (w *Waiters) remember(room string, ts []Ticket, gen int64, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.roomLocked(room)
	for _, t := range ts {
		k := m[t.ID]
		if k != nil && k.stale > gen || w.roomStale[room] > gen {
			continue // invalidated while this read was on its way
		}
		best := t.Position
		if k != nil && k.best > 0 && (best <= 0 || k.best < best) {
			best = k.best
		}
		waiting := t.Waiting
		t.Position, t.Waiting, t.Rate = 0, 0, 0
		nk := &knownTicket{t: t, used: now, best: best, waiting: waiting}
		if k != nil && !k.invalid && t.State == vocab.StateWaiting {
			nk.entered, nk.enteredAt = k.entered, k.enteredAt // a poll between the enter and its connection
		}
		m[t.ID] = nk
	}
}

// Entered keeps a waiting ticket as this server's enter answered it, gen
// (Gen) taken before the enter: its connection's first message comes from
// it. Its score is its seq: a drawn place's seq is no score in the line,
// so the view does not find it and the store is read.
func (w *Waiters) Entered(room string, t Ticket, gen int64) {
	if t.State != vocab.StateWaiting || t.Seq <= 0 || t.Position <= 0 {
		return
	}
	now := time.Now()
	t.Score = float64(t.Seq)
	w.remember(room, []Ticket{t}, gen, now)
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.known[room][t.ID]; k != nil && !k.invalid && k.stale <= gen && w.roomStale[room] <= gen {
		k.entered, k.enteredAt = &t, now
	}
}

// first is the first message's ticket of a connection to a waiting ticket
// this server entered for identity within firstFresh, with nothing heard
// of it or its room since: the view's position when the view has its
// score already, else the enter's answer. Once per enter.
func (w *Waiters) first(room, id, identity string, now time.Time) (Ticket, bool) {
	w.mu.Lock()
	k := w.known[room][id]
	if k == nil || k.invalid || k.entered == nil || now.Sub(k.enteredAt) > firstFresh || k.entered.Identity != identity {
		w.mu.Unlock()
		return Ticket{}, false
	}
	t := *k.entered
	k.entered = nil
	w.mu.Unlock()
	if v, ok := w.local(room, id, identity, now); ok && v.Position <= t.Position {
		return v, true
	}
	return t, true
}

// remembered keeps a waiting ticket a connection's first message was read
// from (before which gen was taken), and reports whether it did: not when
// the ticket or its room changed since gen, nor when it does not wait.
func (w *Waiters) remembered(room string, t Ticket, gen int64, now time.Time) bool {
	if t.State != vocab.StateWaiting || math.IsNaN(t.Score) {
		return false
	}
	w.pos.Watch(room) // followed before its first update is due
	w.remember(room, []Ticket{t}, gen, now)
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.known[room][t.ID]
	return k != nil && !k.invalid && k.stale <= gen && w.roomStale[room] <= gen
}

// forget makes the tickets' next update a store read: an admission was
// heard. A ticket not known yet is marked too (until it goes idle), so a
// read of it that started before this is not kept.
func (w *Waiters) forget(room string, ids []string) {
	g := w.gen.Add(1)
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.roomLocked(room)
	for _, id := range ids {
		k := m[id]
		if k == nil {
			k = &knownTicket{used: now}
			m[id] = k
		}
		k.invalid, k.stale = true, g
	}
}

// Left drops a ticket this server ended (leave): its next read is the
// store's, not the view's (whose log read may not have the leave yet), and
// nothing of it is kept for a stale answer.
func (w *Waiters) Left(room, id string) {
	g := w.gen.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roomLocked(room)[id] = &knownTicket{used: time.Now(), invalid: true, stale: g}
	delete(w.polled[room], id)
}

// roomLocked is room's known tickets, made if there are none yet; w.mu held.
func (w *Waiters) roomLocked(room string) map[string]*knownTicket {
	m := w.known[room]
	if m == nil {
		m = map[string]*knownTicket{}
		w.known[room] = m
	}
	return m
}

// admitted takes an admission heard: a waiting ticket known here becomes
// admitted with the event's times, so its next update needs no read;
// another, or one of an event without times, is read next time (forget).
// Either way a read that started before this is not kept.
func (w *Waiters) admitted(room string, adm []Admitted) {
	g := w.gen.Add(1)
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.roomLocked(room)
	for _, a := range adm {
		k := m[a.ID]
		if k != nil && !k.invalid && k.t.State == vocab.StateWaiting && !a.At.IsZero() {
			k.t.State, k.t.Position = vocab.StateAdmitted, 0
			k.t.AdmittedAt, k.t.OrderableAt, k.t.ExpiresAt = a.At, a.Orderable, a.Expires
			k.stale, k.entered = g, nil
			continue
		}
		if k == nil {
			k = &knownTicket{used: now}
			m[a.ID] = k
		}
		k.invalid, k.stale = true, g
	}
}

// forgetRoom makes every ticket's next update of room a store read: its
// settings changed (sold out, reject, ended).
func (w *Waiters) forgetRoom(room string) {
	g := w.gen.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.known[room] {
		k.invalid, k.stale = true, g
	}
	w.roomStale[room] = g
}
