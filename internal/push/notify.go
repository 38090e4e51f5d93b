package push

import "slices"

// noticeQueue bounds pending notices; past it Notify marks tickets due for
// the next tick instead of blocking.
const noticeQueue = 1024

type notice struct {
	room    string
	tickets []string // nil with all
	all     bool
}

// Notify asks for tickets of room to be fetched and pushed now rather than at
// their next tier slot, typically because they were just admitted. It never
// waits for the hub's loop; tickets with no connection on this hub are ignored, so it is fine
// to call it on every instance from a pub/sub fan-out.
func (h *Hub) Notify(room string, tickets []string) {
	if len(tickets) == 0 {
		return
	}
	n := notice{room: room, tickets: slices.Clone(tickets)}
	h.noticed.Add(1)
	select {
	case h.notices <- n:
	default:
		h.markForced(n)
	}
}

// NotifyRoom pushes every connection of room at once, e.g. after its
// settings changed. It never waits for the hub's loop.
func (h *Hub) NotifyRoom(room string) {
	n := notice{room: room, all: true}
	h.noticed.Add(1)
	select {
	case h.notices <- n:
	default:
		h.markForced(n)
	}
}

// markForced is the fallback when the notice queue is full: the tickets are
// fetched and pushed at the next tick.
func (h *Hub) markForced(n notice) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rooms[n.room]
	if r == nil {
		return
	}
	if n.all {
		r.force = true
		return
	}
	for _, id := range n.tickets {
		if t := r.tickets[id]; t != nil {
			t.force = true
			r.touch(h, t)
		}
	}
}

// coalesce merges n with every notice already queued into one batch per
// room, each ticket once, keeping only tickets connected here.
func (h *Hub) coalesce(n notice) []batch {
	type want struct {
		all     bool
		tickets map[string]struct{}
	}
	wants := make(map[string]*want)
	add := func(n notice) {
		w := wants[n.room]
		if w == nil {
			w = &want{tickets: make(map[string]struct{})}
			wants[n.room] = w
		}
		w.all = w.all || n.all
		for _, id := range n.tickets {
			w.tickets[id] = struct{}{}
		}
	}
	add(n)
	// Bounded, so a steady stream of notices cannot starve the tick.
	for range noticeQueue {
		select {
		case n := <-h.notices:
			add(n)
			continue
		default:
		}
		break
	}

	now := h.clock.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []batch
	for id, w := range wants {
		r := h.rooms[id]
		if r == nil {
			continue
		}
		b := batch{room: id}
		take := func(tid string, t *ticket) {
			b.add(tid, true)
			// A notice is off the ticket's schedule: keep its next slot, so a
			// room-wide push does not line every ticket up on one tick.
			if !now.Before(t.next) {
				r.setNext(h, t, now.Add(h.slot(t)))
			}
		}
		if w.all {
			for tid, t := range r.tickets {
				take(tid, t)
			}
		} else {
			for tid := range w.tickets {
				if t := r.tickets[tid]; t != nil {
					take(tid, t)
				}
			}
		}
		if len(b.tickets) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// NotifyAll pushes every connection of every room at once, e.g. when the
// server switches to or from degraded mode.
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	rooms := make([]string, 0, len(h.rooms))
	for id := range h.rooms {
		rooms = append(rooms, id)
	}
	h.mu.Unlock()
	for _, id := range rooms {
		h.NotifyRoom(id)
	}
}
