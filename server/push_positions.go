package server

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// presentEvery is how often the open connections' sign of life is written:
// one snapshot of them per room (Line.Present), whatever their number,
// well within queue.MinAbandonAfterS. A waiter whose connections all
// closed is marked seen (Line.Alive) at the next one, so it is dropped
// abandon_after_s after that: at most this much late.
const presentEvery = 5 * time.Second

// firstFresh is how long a waiting ticket this server entered answers its
// connection's first message, as the enter answered it (localPositions.first):
// a page opens its connection right after its enter, and a status read
// then would tell what the enter just did.
const firstFresh = 2 * time.Second

// knownIdle drops a ticket nobody fetched for this long (its connections closed).
const knownIdle = time.Minute

// positionSource gives positions from the room's change log (queue.Positions).
type positionSource interface {
	Watch(room string)
	Position(room string, score float64) (pos, waiting int64, rate float64, ok bool)
}

// aliveWriter writes the open connections' sign of life: a snapshot of
// them per room, and the mark of those that closed since the last one.
type aliveWriter interface {
	Alive(ctx context.Context, room string, ids []string) error
	Present(ctx context.Context, room, server string, open []string) error
}

// localPositions answers a waiting ticket's update from this server's view
// of the line: the ticket as last read from the store, with its position,
// the number waiting and the rate from the change log. The store is read
// only when the ticket may have changed: the first fetch, an admission
// heard, its score gone from the line (admitted, abandoned, left), or the
// view not synced.
type localPositions struct {
	pos   positionSource
	alive aliveWriter
	log   *slog.Logger
	// open lists the tickets with a connection on this server, by room
	// (push.Hub.Open); server names this process's snapshots.
	open   func() map[string][]string
	server string
	// clock is the line's (Line.Now): an admitted ticket's expiry is on it.
	clock func() time.Time
	// shown is each room's last snapshot written (flush's goroutine only).
	shown map[string]map[string]struct{}

	// gen orders reads and invalidations: a read that started before a
	// ticket was invalidated does not make it known again.
	gen atomic.Int64

	mu    sync.Mutex
	known map[string]map[string]*knownTicket // room -> ticket
	// roomStale is the generation of each room's last change (forgetRoom),
	// so a read of a ticket not yet known that started before it is not
	// kept; entries older than the last flush but one are dropped.
	roomStale map[string]int64
	flushed   int64 // the generation at the last flush
}

type knownTicket struct {
	t       queue.Ticket
	stale   int64 // generation of the last invalidation; 0: none
	used    time.Time
	invalid bool // read it from the store next time
	// entered is this server's enter answer for the ticket, kept until
	// its connection's first message or firstFresh (enteredAt).
	entered   *queue.Ticket
	enteredAt time.Time
	// best is the lowest position this ticket was given, 0 before any. The
	// view may lag the store by a log read: a position read from the store
	// can be ahead of the view's next answer, and a place never goes back.
	best int64
}

func newLocalPositions(pos positionSource, alive aliveWriter, log *slog.Logger) *localPositions {
	return &localPositions{pos: pos, alive: alive, log: log, server: queue.RandomID(), clock: time.Now,
		shown: map[string]map[string]struct{}{}, known: map[string]map[string]*knownTicket{},
		roomStale: map[string]int64{}}
}

// local returns the ticket's update from the view, or false when the store
// must be read.
func (lp *localPositions) local(room, id string, now time.Time) (queue.Ticket, bool) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	k := lp.known[room][id]
	if k != nil && !k.invalid && k.t.State == vocab.StateAdmitted && lp.clock().Before(k.t.ExpiresAt) {
		// Admitted as an admission's event told: its first update after
		// it, once (a later one reads: completed, left).
		k.invalid = true
		t := k.t
		_, t.Waiting, t.Rate, _ = lp.pos.Position(room, t.Score)
		return t, true
	}
	if k == nil || k.invalid || k.t.State != vocab.StateWaiting {
		return queue.Ticket{}, false
	}
	k.used = now
	pos, waiting, rate, ok := lp.pos.Position(room, k.t.Score)
	if !ok {
		return queue.Ticket{}, false
	}
	if k.best > 0 && pos > k.best {
		pos = k.best
	}
	if pos > 0 {
		k.best = pos
	}
	t := k.t
	t.Position, t.Waiting, t.Rate = pos, waiting, rate
	return t, true
}

// remember keeps tickets read from the store at generation gen.
func (lp *localPositions) remember(room string, ts []queue.Ticket, gen int64, now time.Time) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	m := lp.roomLocked(room)
	for _, t := range ts {
		k := m[t.ID]
		if k != nil && k.stale > gen || lp.roomStale[room] > gen {
			continue // invalidated while this read was on its way
		}
		best := t.Position
		if k != nil && k.best > 0 && (best <= 0 || k.best < best) {
			best = k.best
		}
		t.Position, t.Waiting, t.Rate = 0, 0, 0
		m[t.ID] = &knownTicket{t: t, used: now, best: best}
	}
}

// entered keeps a waiting ticket as this server's enter answered it, gen
// taken before the enter: its connection's first message comes from it
// (first). Its score is its seq: a drawn place's seq is no score in the
// line, so the view does not find it and the store is read.
func (lp *localPositions) entered(room string, t queue.Ticket, gen int64, now time.Time) {
	if t.State != vocab.StateWaiting || t.Seq <= 0 || t.Position <= 0 {
		return
	}
	t.Score = float64(t.Seq)
	lp.remember(room, []queue.Ticket{t}, gen, now)
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if k := lp.known[room][t.ID]; k != nil && !k.invalid && k.stale <= gen && lp.roomStale[room] <= gen {
		k.entered, k.enteredAt = &t, now
	}
}

// first is the first message's ticket of a connection to a waiting ticket
// this server entered for identity within firstFresh, with nothing heard
// of it or its room since: the view's position when the view has its
// score already, else the enter's answer. Once per enter.
func (lp *localPositions) first(room, id, identity string, now time.Time) (queue.Ticket, bool) {
	lp.mu.Lock()
	k := lp.known[room][id]
	if k == nil || k.invalid || k.entered == nil || now.Sub(k.enteredAt) > firstFresh || k.entered.Identity != identity {
		lp.mu.Unlock()
		return queue.Ticket{}, false
	}
	t := *k.entered
	k.entered = nil
	lp.mu.Unlock()
	if v, ok := lp.local(room, id, now); ok && v.Position <= t.Position {
		return v, true
	}
	return t, true
}

// remembered keeps a waiting ticket a connection's first message was read
// from (before which gen was taken), and reports whether it did: not when
// the ticket or its room changed since gen, nor when it does not wait.
func (lp *localPositions) remembered(room string, t queue.Ticket, gen int64, now time.Time) bool {
	if t.State != vocab.StateWaiting || math.IsNaN(t.Score) {
		return false
	}
	lp.pos.Watch(room) // followed before its first update is due
	lp.remember(room, []queue.Ticket{t}, gen, now)
	lp.mu.Lock()
	defer lp.mu.Unlock()
	k := lp.known[room][t.ID]
	return k != nil && !k.invalid && k.stale <= gen && lp.roomStale[room] <= gen
}

// forget makes the tickets' next update a store read: an admission was
// heard. A ticket not known yet is marked too (until it goes idle), so a
// read of it that started before this is not kept.
func (lp *localPositions) forget(room string, ids []string) {
	g := lp.gen.Add(1)
	now := time.Now()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	m := lp.roomLocked(room)
	for _, id := range ids {
		k := m[id]
		if k == nil {
			k = &knownTicket{used: now}
			m[id] = k
		}
		k.invalid, k.stale = true, g
	}
}

// roomLocked is room's known tickets, made if there are none yet; lp.mu held.
func (lp *localPositions) roomLocked(room string) map[string]*knownTicket {
	m := lp.known[room]
	if m == nil {
		m = map[string]*knownTicket{}
		lp.known[room] = m
	}
	return m
}

// admitted takes an admission heard: a waiting ticket known here becomes
// admitted with the event's times, so its next update needs no read;
// another, or one of an event without times, is read next time (forget).
// Either way a read that started before this is not kept.
func (lp *localPositions) admitted(room string, adm []queue.Admitted) {
	g := lp.gen.Add(1)
	now := time.Now()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	m := lp.roomLocked(room)
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
func (lp *localPositions) forgetRoom(room string) {
	g := lp.gen.Add(1)
	lp.mu.Lock()
	defer lp.mu.Unlock()
	for _, k := range lp.known[room] {
		k.invalid, k.stale = true, g
	}
	lp.roomStale[room] = g
}

// run writes the open connections' sign of life every presentEvery and
// drops tickets nobody fetches.
func (lp *localPositions) run(ctx context.Context) error {
	t := time.NewTicker(presentEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			lp.flush(ctx, time.Now())
		}
	}
}

func (lp *localPositions) flush(ctx context.Context, now time.Time) {
	lp.mu.Lock()
	// A room's change is kept for one to two flush intervals: longer than
	// a store read takes (its timeouts are far shorter).
	for room, g := range lp.roomStale {
		if g <= lp.flushed {
			delete(lp.roomStale, room)
		}
	}
	lp.flushed = lp.gen.Load()
	for room, m := range lp.known {
		for id, k := range m {
			if now.Sub(k.used) > knownIdle {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			delete(lp.known, room)
		}
	}
	lp.mu.Unlock()
	if lp.open != nil {
		lp.present(ctx, lp.open())
	}
}

// present writes each room's snapshot of open connections, after marking
// the tickets that were in the room's last snapshot and are not in this
// one (their connections closed, or moved to another server): so no
// waiter goes without a sign of life between the two. A room whose mark
// failed keeps its last snapshot, to be tried again.
func (lp *localPositions) present(ctx context.Context, open map[string][]string) {
	for room := range lp.shown {
		if _, ok := open[room]; !ok {
			open[room] = nil
		}
	}
	for room, ids := range open {
		cur := make(map[string]struct{}, len(ids))
		for _, id := range ids {
			cur[id] = struct{}{}
		}
		var gone []string
		for id := range lp.shown[room] {
			if _, ok := cur[id]; !ok {
				gone = append(gone, id)
			}
		}
		if len(gone) > 0 {
			// In seq order (an id begins with its zero-padded seq): the
			// store writes each bucket of consecutive seqs once a call.
			slices.Sort(gone)
			if err := lp.alive.Alive(ctx, room, gone); err != nil {
				if ctx.Err() == nil {
					lp.log.Warn("push: sign of life", "room", room, "tickets", len(gone), "err", err)
				}
				continue
			}
		}
		if err := lp.alive.Present(ctx, room, lp.server, ids); err != nil {
			if ctx.Err() == nil {
				lp.log.Warn("push: sign of life", "room", room, "tickets", len(ids), "err", err)
			}
			continue
		}
		if len(cur) == 0 {
			delete(lp.shown, room)
		} else {
			lp.shown[room] = cur
		}
	}
}
