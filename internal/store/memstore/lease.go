package memstore

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// lease is a room's admitter lease: what lease.lua keeps under {room}:admitter.
type lease struct {
	holder      string
	until, tick int64 // end of the lease, start of the last admitting tick (ms)
	kept        int64 // the record goes after this (ms), as the key's PEXPIRE
}

// Lease is lease.lua in Go. The record's own expiry follows the callers'
// clock here, where Redis's PEXPIRE follows Redis's: both keep it far
// beyond the lease's end.
func (s *Store) Lease(_ context.Context, room, holder string, now time.Time, ttl, interval time.Duration, admitted time.Time) (queue.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	l := r.lease
	if l.kept <= ms(now) {
		l = lease{}
	}
	if !admitted.IsZero() {
		l.tick = max(l.tick, ms(admitted))
	}
	out := queue.Lease{Holder: l.holder, Until: time.UnixMilli(l.until)}
	if l.holder != "" && l.holder != holder && l.until > ms(now) {
		r.lease = l
		out.LastTick = lastTick(l.tick)
		return out, nil
	}
	if l.holder != holder {
		out.Previous = l.holder
	}
	ttlMS, intervalMS := max(ttl.Milliseconds(), 1), max(interval.Milliseconds(), 1)
	l.holder, l.until = holder, ms(now)+ttlMS
	l.kept = l.until + queue.LeaseKept.Milliseconds()
	r.lease = l
	out.Held, out.Holder, out.Until, out.LastTick = true, holder, time.UnixMilli(l.until), lastTick(l.tick)
	out.Due = ms(now) >= l.tick+intervalMS
	return out, nil
}

func lastTick(t int64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.UnixMilli(t)
}
