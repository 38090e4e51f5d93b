package queue

import (
	"github.com/waitroom/waitroom/internal/vocab"
	"sync"
)

// floor keeps t's position from going up on this server (places) in a
// line whose order is settled: not in a random one, nor before an opening's
// draw (the draw puts the pre-queue ahead of those who came after the
// opening), so a room with an opening to come or to draw starts its memory
// again.
func (l *Line) floor(room string, s *Settings, t *Ticket) {
	now := l.clock.Now()
	if !s.Ranked() || s.OpensAt != nil && (now.Before(*s.OpensAt) || l.drawPending(room, s, now)) {
		l.places.forget(room)
		return
	}
	l.places.floor(room, t)
}

// maxPlacesKept bounds the places a server remembers (about 100 bytes
// each); past it the memory starts again, and a place may then show higher
// once after Redis went back in time.
const maxPlacesKept = 250_000

// places is the lowest position this server told each waiting ticket, so
// that no read of it (a status read, a new page) shows a higher one: a
// Redis restarted from an older snapshot brings back positions from before
// admissions it forgot, and is read before any server notices. A page's
// connection or poll keeps its own best position too (Waiters); this
// covers every other read on this server. (A straggler a stale server put
// in the pre-queue after the draw joins ahead of later arrivals; they keep
// the place they were told until the line reaches it.)
type places struct {
	mu sync.Mutex
	n  int
	m  map[string]map[string]int64 // room -> ticket -> lowest position told
}

// floor lowers t's position to the lowest this server told it, and
// remembers it; a ticket that no longer waits is forgotten.
func (p *places) floor(room string, t *Ticket) {
	if t.ID == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.m[room]
	if t.State != vocab.StateWaiting || t.Position <= 0 {
		if _, ok := r[t.ID]; ok {
			delete(r, t.ID)
			p.n--
		}
		return
	}
	if best, ok := r[t.ID]; ok {
		t.Position = min(t.Position, best)
		r[t.ID] = t.Position
		return
	}
	if p.n >= maxPlacesKept || p.m == nil {
		p.m, p.n = map[string]map[string]int64{}, 0
	}
	if p.m[room] == nil {
		p.m[room] = map[string]int64{}
	}
	p.m[room][t.ID] = t.Position
	p.n++
}

// forget drops a room's places (the room was deleted).
func (p *places) forget(room string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n -= len(p.m[room])
	delete(p.m, room)
}
