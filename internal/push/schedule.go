package push

import (
	"math"
	"slices"
	"time"
)

// wake is one ticket's entry in its room's schedule: when it next needs a
// tick's attention (its fetch or a keep-alive), in nanoseconds since the
// hub started. A tick walks these dense entries and looks at a ticket only
// when its time has come, so the tickets between their updates cost no
// memory reads of their own.
type wake struct {
	at int64
	t  *ticket
}

// mono is at in nanoseconds since the hub started; a zero time is before
// everything (due at once). Sub uses the monotonic clock when both have it.
func (h *Hub) mono(at time.Time) int64 {
	if at.IsZero() {
		return math.MinInt64
	}
	return int64(at.Sub(h.epoch))
}

// add puts a new ticket in r (its map and its schedule).
func (r *room) add(h *Hub, id string, t *ticket) {
	t.id, t.idx = id, len(r.wakes)
	r.tickets[id] = t
	r.wakes = append(r.wakes, wake{t: t})
	r.touch(h, t)
}

// remove takes t out of r; the last entry of the schedule takes its place.
func (r *room) remove(t *ticket) {
	delete(r.tickets, t.id)
	last := len(r.wakes) - 1
	moved := r.wakes[last]
	r.wakes[t.idx] = moved
	moved.t.idx = t.idx
	r.wakes[last] = wake{}
	r.wakes = r.wakes[:last]
	// Give back most of a schedule that was far bigger.
	if cap(r.wakes) > 1024 && len(r.wakes) < cap(r.wakes)/4 {
		r.wakes = slices.Clip(r.wakes)
	}
}

// touch records when t next needs a tick: the earlier of its fetch and its
// keep-alive, at once when forced. Call it after changing t.next, t.pingAt
// or t.force.
func (r *room) touch(h *Hub, t *ticket) {
	at := minTime(t.next, t.pingAt)
	if t.force {
		at = time.Time{}
	}
	r.wakes[t.idx].at = h.mono(at)
}

// setNext sets t's next fetch.
func (r *room) setNext(h *Hub, t *ticket, at time.Time) {
	t.next = at
	r.touch(h, t)
}
