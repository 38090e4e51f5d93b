package push

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// maxParallelFetch bounds the rooms fetched at once within one tick.
const maxParallelFetch = 8

// maxFetch bounds the tickets of one Fetch (one Redis pipeline).
const maxFetch = 256

// dueSlack lets a ticket whose slot falls a hair after this tick be fetched
// now rather than a whole tick late.
const dueSlack = 25 * time.Millisecond

// batch is one Fetch call: tickets of one room, each with whether its
// update is pushed regardless of the tier throttle.
type batch struct {
	room    string
	tickets []string
	force   []bool
}

func (b *batch) add(ticket string, force bool) {
	b.tickets = append(b.tickets, ticket)
	b.force = append(b.force, force)
}

// Run is the hub's loop: each Tick it fetches the due tickets, one Fetch per
// room, and between ticks it serves Notify and NotifyRoom. Ticks and notices
// share this one goroutine so an older read never overtakes a newer one (a
// stale "waiting" after "admitted"). It returns nil when ctx ends.
func (h *Hub) Run(ctx context.Context) error {
	if !h.running.CompareAndSwap(false, true) {
		return errors.New("push: run: already running")
	}
	defer h.running.Store(false)
	t := h.clock.NewTicker(h.o.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.Chan():
			now := h.clock.Now()
			// Big rooms are fetched in chunks, with notices (admissions)
			// served between them, so a tick with thousands of due tickets
			// does not hold an admission back.
			h.fetchChunked(ctx, h.due(now), now, true)
			if h.onTick != nil {
				h.onTick()
			}
		case n := <-h.notices:
			// A room-wide notice (settings changed) can be as big as a tick.
			h.fetchChunked(ctx, h.coalesce(n), h.clock.Now(), true)
		}
	}
}

// due collects, per room, the tickets whose slot has come, and closes
// connections whose final-state grace is over.
func (h *Hub) due(now time.Time) []batch {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.finals {
		if now.Sub(c.finalAt) >= h.o.FinalGrace {
			c.kick(websocket.StatusNormalClosure, reasonDone, nil)
			delete(h.finals, c)
		}
	}
	var out []batch
	limit := h.mono(now.Add(dueSlack))
	for id, r := range h.rooms {
		b := batch{room: id}
		// Index, not range: the schedule's entries stay where they are
		// while it is walked (only register and unregister move them).
		for i := range r.wakes {
			w := r.wakes[i]
			if !r.force && w.at > limit {
				continue
			}
			t := w.t
			h.keepAlive(t, now)
			force := r.force || t.force
			if force || !now.Add(dueSlack).Before(t.next) {
				b.add(t.id, force)
				t.force = false
				// Provisional: if the fetch fails, retry at the next slot, not every tick.
				if !now.Add(dueSlack).Before(t.next) {
					t.next = now.Add(h.slot(t))
				}
			}
			r.touch(h, t)
		}
		r.force = false
		if len(b.tickets) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// fetchAll runs the batches, several rooms at once, and returns when all
// were applied.
func (h *Hub) fetchAll(ctx context.Context, batches []batch, now time.Time) {
	if len(batches) == 1 {
		h.fetch(ctx, batches[0], now)
		return
	}
	sem := make(chan struct{}, maxParallelFetch)
	var wg sync.WaitGroup
	for _, b := range batches {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			h.fetch(ctx, b, now)
		})
	}
	wg.Wait()
}

func (h *Hub) fetch(ctx context.Context, b batch, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, h.o.WriteTimeout)
	defer cancel()
	h.fetches.Add(1)
	ups, err := h.f.Fetch(ctx, b.room, b.tickets)
	if err != nil {
		h.fetchErrors.Add(1)
		// A canceled Run is shutting down, not failing.
		if !errors.Is(ctx.Err(), context.Canceled) {
			h.log.Warn("push: fetch", "room", b.room, "tickets", len(b.tickets), "err", err)
		}
		return
	}
	if len(ups) != len(b.tickets) {
		h.log.Error("push: fetch returned wrong count", "room", b.room, "want", len(b.tickets), "got", len(ups))
	}
	// Written here, with the hub's lock released: as far as each socket
	// takes its message without waiting.
	for _, c := range h.apply(b, ups, now) {
		c.writeInline(h)
	}
}

// apply fans each update out to the ticket's connections and sets its next
// fetch. It holds the hub lock but never blocks: a full queue kicks. It
// returns the connections that got a message and are written inline
// (writeInline) by the caller; the others' writers are started.
func (h *Hub) apply(b batch, ups []Update, now time.Time) (inline []*client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rooms[b.room]
	if r == nil {
		return nil
	}
	for i, u := range ups[:min(len(ups), len(b.tickets))] {
		id := b.tickets[i]
		if u.Ticket != "" && u.Ticket != id {
			h.log.Error("push: fetch returned tickets out of order", "room", b.room, "want", id, "got", u.Ticket)
			continue
		}
		t := r.tickets[id]
		if t == nil {
			continue // every connection left while fetching
		}
		t.state, t.interval = u.State, u.Interval
		if !b.force[i] || !now.Add(dueSlack).Before(t.next) {
			t.next = now.Add(h.slot(t))
		}
		for _, c := range t.clients {
			if c.kicked() {
				continue
			}
			switch decide(c, u, now, b.force[i]) {
			case send:
				if h.enqueue(c, u, now, b.force[i]) && c.inline != nil {
					inline = append(inline, c)
				}
			case later:
				// Come back when this connection may have its next update.
				t.next = minTime(t.next, c.lastSentAt.Add(u.Interval))
			}
		}
		r.touch(h, t)
	}
	return inline
}

// enqueue queues u for c and reports whether it did. A forced send (a
// notice: settings changed, admission) does not move c's throttle clock,
// so a room-wide push leaves the waiters' update schedules spread as they
// were. A connection without an inline writer gets its writer started.
func (h *Hub) enqueue(c *client, u Update, now time.Time, forced bool) bool {
	select {
	case c.queue <- u.Payload:
		if c.inline == nil {
			c.wake(h)
		}
		c.lastSent = u.Payload
		// A message is traffic: the keep-alive waits for PingInterval of silence.
		c.pingAt = now.Add(h.o.PingInterval)
		if !forced || c.lastSentAt.IsZero() {
			c.lastSentAt = now
		}
		if final(u.State) && c.finalAt.IsZero() {
			c.finalAt = now
			h.finals[c] = struct{}{}
		}
		return true
	default:
		if c.kick(websocket.StatusTryAgainLater, reasonSlow, ErrSlow) {
			h.slow.Add(1)
			h.log.Info("push: slow client disconnected", "room", c.room, "transport", c.tr.Name())
		}
		return false
	}
}

// keepAlive asks t's connections whose keep-alive is due for a ping (an SSE
// comment): those that were sent nothing for PingInterval. The hub's tick
// stands in for a timer per connection; a ticket none of whose connections
// is due costs one comparison.
func (h *Hub) keepAlive(t *ticket, now time.Time) {
	if now.Before(t.pingAt) {
		return
	}
	var next time.Time
	for _, c := range t.clients {
		if !now.Before(c.pingAt) {
			c.pingAt = now.Add(h.o.PingInterval)
			c.pingDue.Store(true)
			c.wake(h)
		}
		if next.IsZero() || c.pingAt.Before(next) {
			next = c.pingAt
		}
	}
	t.pingAt = next
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// chunk splits batches so that no Fetch carries more than size tickets.
func chunk(batches []batch, size int) []batch {
	var out []batch
	for _, b := range batches {
		for len(b.tickets) > size {
			out = append(out, batch{room: b.room, tickets: b.tickets[:size], force: b.force[:size]})
			b = batch{room: b.room, tickets: b.tickets[size:], force: b.force[size:]}
		}
		out = append(out, b)
	}
	return out
}

// fetchChunked fetches batches a few chunks at a time; with between set, it
// serves the notices that came in meanwhile (admissions) after each step.
func (h *Hub) fetchChunked(ctx context.Context, batches []batch, now time.Time, between bool) {
	batches = chunk(batches, maxFetch)
	for len(batches) > 0 {
		n := min(maxParallelFetch, len(batches))
		h.fetchAll(ctx, batches[:n], now)
		batches = batches[n:]
		if between && len(batches) > 0 {
			select {
			case n := <-h.notices:
				h.fetchChunked(ctx, h.coalesce(n), h.clock.Now(), false)
			default:
			}
		}
	}
}
