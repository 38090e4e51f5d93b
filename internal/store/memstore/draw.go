package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// unschedule takes id out of the pre-queue, if it is in it.
func (r *room) unschedule(id string) {
	for i, w := range r.pre {
		if w.id == id {
			r.pre = append(r.pre[:i], r.pre[i+1:]...)
			return
		}
	}
}

func (s *Store) PreQueue(_ context.Context, room string) ([]queue.PreQueued, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	out := make([]queue.PreQueued, len(r.pre))
	for i, w := range r.pre {
		out[i].ID = w.id
		if t := r.tickets[w.id]; t != nil {
			out[i].Network = t.network
		}
	}
	return out, nil
}

// Draw is draw.lua in Go.
func (s *Store) Draw(_ context.Context, room string, rec queue.DrawRecord, order []string, now time.Time) (bool, int64, error) {
	s.mu.Lock()
	r, n := s.room(room), ms(now)
	if r.draw != nil && r.draw.OpensAt.Equal(rec.OpensAt) {
		late := r.lateToLine(n)
		s.commitLog(r)
		s.mu.Unlock()
		if late > 0 {
			s.publish(event{room: room, changed: true})
		}
		return false, late, nil
	}
	if len(order) != len(r.pre) {
		s.mu.Unlock()
		return false, 0, queue.ErrDrawStale
	}
	in := make(map[string]bool, len(r.pre))
	for _, w := range r.pre {
		in[w.id] = true
	}
	for _, id := range order {
		if !in[id] {
			s.mu.Unlock()
			return false, 0, queue.ErrDrawStale
		}
		delete(in, id) // an id twice in order is stale too
	}
	// Drawn places go ahead of everyone in the line: scores below its head.
	base := int64(1)
	if len(r.q) > 0 {
		base = min(r.q[0].score, 1)
	}
	k := int64(len(order))
	drawn := make([]waiter, 0, len(order)+len(r.q))
	for i, id := range order {
		t := r.tickets[id]
		if t == nil {
			continue // no record: nothing to place, as draw.lua skips it
		}
		t.state, t.score, t.entryPos = vocab.StateWaiting, base-k-1+int64(i+1), int64(i+1)
		drawn = append(drawn, waiter{score: t.score, id: id})
		r.logAdd(t.score)
		r.seen[id] = n
	}
	r.q = append(drawn, r.q...)
	r.pre = nil
	d := rec
	d.OpensAt, d.At = time.UnixMilli(ms(rec.OpensAt)).UTC(), time.UnixMilli(ms(rec.At)).UTC()
	r.draw = &d
	late := r.lateToLine(n)
	s.commitLog(r)
	s.mu.Unlock()
	s.publish(event{room: room, changed: true})
	return true, late, nil
}

// lateToLine moves up to MaxScan pre-queue entries made after their
// opening's draw to the line, by arrival, as any latecomer; s.mu is held.
func (r *room) lateToLine(now int64) int64 {
	k := min(len(r.pre), queue.MaxScan)
	for _, w := range r.pre[:k] {
		t := r.tickets[w.id]
		if t == nil {
			continue
		}
		t.state, t.score = vocab.StateWaiting, w.score
		i := sort.Search(len(r.q), func(i int) bool { return r.q[i].score >= w.score })
		r.q = append(r.q[:i], append([]waiter{w}, r.q[i:]...)...)
		r.logAdd(w.score)
		t.entryPos = int64(i + 1)
		r.seen[w.id] = now
	}
	r.pre = r.pre[k:]
	return int64(k)
}

func (s *Store) LastDraw(_ context.Context, room string) (queue.DrawRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.room(room).draw; d != nil {
		return *d, true, nil
	}
	return queue.DrawRecord{}, false, nil
}
