package memstore

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// The change log: one entry per operation that changed the line, as the Lua
// scripts append to the room's stream. Entry IDs come from one counter of
// the store, so they keep growing across a deleted room as a stream's
// time-based IDs do, while N starts again at 1.

// logDel and logAdd note a change to r.q for the operation's entry; s.mu is held.
func (r *room) logAdd(score int64) { r.pending.Add = append(r.pending.Add, float64(score)) }
func (r *room) logDel(score int64) { r.pending.Del = append(r.pending.Del, float64(score)) }

// commitLog appends the operation's entry, if it changed anything, and
// wakes the readers; s.mu is held.
func (s *Store) commitLog(r *room) {
	if len(r.pending.Add) == 0 && len(r.pending.Del) == 0 {
		return
	}
	s.logID++
	r.logN++
	e := r.pending
	e.ID, e.N = strconv.FormatInt(s.logID, 10), r.logN
	r.pending = queue.LogEntry{}
	r.log = append(r.log, e)
	if keep := queue.LogKeeps(len(r.q)); len(r.log) > keep+100 {
		// Trimmed as MAXLEN ~ does: whole blocks of the oldest (Redis's
		// stream nodes hold 100 entries).
		r.log = slices.Delete(r.log, 0, (len(r.log)-keep)/100*100)
	}
	if s.logWake != nil {
		close(s.logWake)
		s.logWake = nil
	}
}

func (s *Store) LogHead(_ context.Context, room string) (queue.LogPos, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	if len(r.log) == 0 {
		return queue.LogPos{}, nil
	}
	return r.log[len(r.log)-1].LogPos, nil
}

func (s *Store) LineScores(_ context.Context, room string, after *float64, limit int) ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	i := 0
	if after != nil {
		i = sort.Search(len(r.q), func(i int) bool { return float64(r.q[i].score) > *after })
	}
	out := make([]float64, 0, min(limit, len(r.q)-i))
	for ; i < len(r.q) && len(out) < limit; i++ {
		out = append(out, float64(r.q[i].score))
	}
	return out, nil
}

func logID(id string) int64 {
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

func (s *Store) ReadLog(ctx context.Context, room string, after queue.LogPos, limit int, wait time.Duration) ([]queue.LogEntry, error) {
	from := logID(after.ID)
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		s.mu.Lock()
		r := s.room(room)
		i := sort.Search(len(r.log), func(i int) bool { return logID(r.log[i].ID) > from })
		if i < len(r.log) || wait <= 0 {
			out := slices.Clone(r.log[i:min(len(r.log), i+limit)])
			s.mu.Unlock()
			return out, nil
		}
		if s.logWake == nil {
			s.logWake = make(chan struct{})
		}
		wake := s.logWake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-timeout:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Store) Alive(_ context.Context, room string, ids []string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	for _, id := range ids {
		if _, ok := r.seen[id]; ok {
			r.seen[id] = ms(now)
		}
	}
	return nil
}

func (s *Store) Present(_ context.Context, room, server string, open []string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make(map[string]struct{}, len(open))
	for _, id := range open {
		ids[id] = struct{}{}
	}
	s.room(room).present[server] = snapshot{at: ms(now), ids: ids}
	return nil
}

// silent reports whether waiter id showed no sign of life since before
// (ms): neither its own (enter, a read, Alive) nor in a server's latest
// snapshot of open connections (tick.lua's seen_of and present).
func (r *room) silent(id string, before int64) bool {
	if seen, ok := r.seen[id]; !ok || seen >= before {
		return false
	}
	for _, sn := range r.present {
		if _, ok := sn.ids[id]; ok && sn.at >= before {
			return false
		}
	}
	return true
}

// forgetSnapshots drops the snapshots that save nobody (taken before
// before) and are older than presentKept, as tick.lua does; s.mu is held.
func (r *room) forgetSnapshots(before, now int64) {
	for server, sn := range r.present {
		if sn.at < min(before, now-presentKept) {
			delete(r.present, server)
		}
	}
}

// presentKept is how long a server's last snapshot stays at least
// (tick.lua): a server that stopped without a word keeps its waiters' last
// sign of life for a while, even if abandon_after_s is raised meanwhile.
const presentKept = 10 * 60 * 1000

func (s *Store) Rate(_ context.Context, room string) (float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.room(room).rate, nil
}
