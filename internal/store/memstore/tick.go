package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// oldest returns up to limit ids of z scored below before (or at it, when
// inclusive), lowest score first, ties by id: ZRANGEBYSCORE's order.
func oldest(z map[string]int64, before int64, inclusive bool, limit int) []string {
	var ids []string
	for id, sc := range z {
		if sc < before || (inclusive && sc == before) {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		if z[ids[i]] != z[ids[j]] {
			return z[ids[i]] < z[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}

// finish marks tickets ended; their records stay for the grace period so
// their owners can still read why.
func (r *room) finish(ids []string, reason string, now int64) {
	for _, id := range ids {
		if rec := r.tickets[id]; rec != nil {
			rec.state, rec.reason = vocab.StateExpired, reason
			r.ended[id] = now
		}
	}
}

// Tick is tick.lua in Go: purge, reclaim, drop the abandoned, then admit
// from the head within the tick's budget and the free capacity.
func (s *Store) Tick(_ context.Context, room string, st *queue.Settings, now time.Time, jitters []time.Duration, draws []uint64) (queue.TickResult, error) {
	s.mu.Lock()
	r, n := s.room(room), ms(now)
	abandonBefore := n - st.AbandonAfterS*1000

	// Purge first, as the script does.
	purge := oldest(r.ended, ms(now.Add(-queue.EndedKept)), false, queue.MaxScan)
	for _, id := range purge {
		if rec := r.tickets[id]; rec != nil && r.visitors[rec.identity] == id {
			delete(r.visitors, rec.identity)
		}
		delete(r.tickets, id)
		delete(r.ended, id)
		delete(r.holders, id) // Redis's holder key expires with the token
	}
	r.sweep(n)

	// A slot's score is its deadline: its expiry, or earlier while its
	// visitor has not arrived (arrival_window_s) or has gone idle.
	due := oldest(r.active, n, true, queue.MaxScan)
	var expired []string
	var noShows, idle int64
	hold, window := st.ArrivalWindowS < 0, max(st.ArrivalWindowS, -st.ArrivalWindowS)*1000
	for _, id := range due {
		reason := vocab.ReasonReclaimed
		rec := r.tickets[id]
		if rec != nil && r.active[id] < rec.expires {
			if hold { // arrivals could not be seen: a new deadline, not a lapse
				r.active[id] = min(rec.expires, n+window)
				continue
			}
			reason = queue.LapseReason(rec.arrived)
			if rec.arrived {
				idle++
			} else {
				noShows++
			}
		}
		expired = append(expired, id)
		delete(r.active, id)
		r.finish([]string{id}, reason, n)
	}
	r.stats["expired_total"] += int64(len(expired))
	r.stats["no_show_total"] += noShows
	r.stats["idle_total"] += idle

	r.forgetSnapshots(abandonBefore, n)
	gone := r.sweepSilent(abandonBefore)
	for _, id := range gone {
		delete(r.seen, id)
		r.unqueue(id)
	}
	r.finish(gone, "abandoned", n)
	abandoned := int64(len(gone))

	res := queue.TickResult{Reclaimed: int64(len(expired)), Purged: int64(len(purge)), NoShows: noShows, Idle: idle}
	var adm []queue.Admitted // the event's
	if !st.Paused {
		start, used := r.budgetAt(n, st.BatchIntervalMS)
		free := min(st.BatchSize-used, st.Capacity-r.heldAt(n)-int64(len(r.active)))
		var ghosts []string
		var deferred []waiter // places of networks at their unarrived limit
		limit, unarrived := queue.UnarrivedLimit(st), map[string]int64{}
		skipped, drawn := 0, 0
		for free > 0 && skipped < queue.MaxScan && len(r.q) > 0 {
			// The head, or in a random line the waiter at rank draw % waiting.
			k := 0
			if len(draws) > 0 {
				if drawn == len(draws) || int64(drawn) == st.BatchSize {
					break
				}
				k = int((draws[drawn] % queue.DrawRange) % uint64(len(r.q)))
				drawn++
			}
			w := r.q[k]
			r.q = append(r.q[:k], r.q[k+1:]...)
			rec, silent := r.tickets[w.id], r.silent(w.id, abandonBefore)
			if !silent && rec != nil && limit > 0 && rec.network != "" && len(deferred) < queue.MaxScan {
				c, ok := unarrived[rec.network]
				if !ok {
					c = r.unarrived(rec.network, n, st.ArrivalWindowS*1000)
				}
				if c >= limit {
					deferred = append(deferred, w) // keeps its place, its sign of life
					unarrived[rec.network] = c
					continue
				}
				unarrived[rec.network] = c + 1
			}
			r.logDel(w.score)
			delete(r.seen, w.id)
			if silent {
				ghosts = append(ghosts, w.id)
				skipped++
				continue
			}
			if rec == nil {
				skipped++ // no record: nothing to admit
				continue
			}
			var j time.Duration
			if k := len(res.Admitted); k < len(jitters) {
				j = jitters[k]
			}
			o := n + j.Milliseconds()
			rec.state, rec.admitted, rec.orderable, rec.expires = vocab.StateAdmitted, n, o, o+st.SessionTTLS*1000
			r.active[w.id] = queue.SlotDeadline(st, o, rec.expires) // |window| when held
			res.Admitted = append(res.Admitted, w.id)
			adm = append(adm, queue.Admitted{ID: w.id, At: time.UnixMilli(n), Orderable: time.UnixMilli(o), Expires: time.UnixMilli(rec.expires)})
			res.Waits = append(res.Waits, time.Duration(n-rec.entered)*time.Millisecond)
			free--
		}
		for _, w := range deferred {
			i := sort.Search(len(r.q), func(i int) bool { return r.q[i].score > w.score })
			r.q = slices.Insert(r.q, i, w)
		}
		r.finish(ghosts, "abandoned", n)
		abandoned += int64(len(ghosts))
		if k := int64(len(res.Admitted)); k > 0 {
			r.budget.start, r.budget.used = start, used+k
			r.countAdmissions(n, k, r.heldAt(n)+int64(len(r.active)))
		}
	}
	r.stats["abandoned_total"] += abandoned
	res.Abandoned = abandoned

	// The measured rate: admissions in the last minute over the time they span.
	cutoff := n - 60000
	drop := 0
	for drop < len(r.admits) && r.admits[drop].at < cutoff {
		r.stats["win_sum"] -= r.admits[drop].n
		drop++
	}
	r.admits = r.admits[drop:]
	r.rate, r.rated, r.measured = rateString(st), true, 0
	span := st.BatchIntervalMS
	sum := r.stats["win_sum"]
	if sum > 0 && len(r.admits) > 0 {
		span = max(n-r.admits[0].at+st.BatchIntervalMS, st.BatchIntervalMS)
		r.rate = float64(sum) / (float64(span) / 1000)
		r.measured = r.rate
	}
	// A line longer than the free slots moves, past them, only as slots
	// free. Until one has freed in the window (an opening's crowd filling
	// an empty room), its estimates take every slot held to its deadline,
	// not the pace that filled the room.
	if occ := r.heldAt(n) + int64(len(r.active)); occ+int64(len(r.q)) > st.Capacity && st.Capacity > 0 {
		freed := int64(0)
		if len(r.admits) > 0 {
			first := r.admits[0]
			freed = sum - (occ - (first.occ - first.n))
		}
		if freed <= 0 {
			r.rate = min(r.rate, float64(st.Capacity)/(float64(r.horizon(st, n))/1000))
		}
	}
	s.commitLog(r)
	s.mu.Unlock()
	if len(res.Admitted) > 0 {
		s.publish(event{room: room, adm: adm})
	}
	return res, nil
}

// sweepSilent is tick.lua's sweep for the silent: from a cursor (a rank in
// the line), round-robin, at most SweepKeep waiters kept and MaxScan
// dropped a tick (those last seen before abandonBefore). A line of
// SweepKeep or fewer is swept whole each tick; in a longer one a silent
// waiter goes within one sweep of the line after abandon_after_s, never
// before. The head is checked exactly as it is admitted. (tick.lua also
// starts over at a waiter too young to be silent: a shortcut, not a rule.)
func (r *room) sweepSilent(abandonBefore int64) []string {
	if r.sweepAt >= len(r.q) {
		r.sweepAt = 0
	}
	var gone []string
	examined := 0
	for _, w := range r.q[r.sweepAt:] {
		if len(gone) >= queue.MaxScan || examined-len(gone) >= queue.SweepKeep {
			break
		}
		examined++
		if r.silent(w.id, abandonBefore) {
			gone = append(gone, w.id)
		}
	}
	r.sweepAt += examined - len(gone)
	return gone
}

// sweep drops marks whose time has passed (spent proofs, client buckets and
// their rates), at
// most MaxScan of each per tick: Redis expires them by themselves.
func (r *room) sweep(now int64) {
	k := 0
	for id, until := range r.pow {
		if k >= queue.MaxScan {
			break
		}
		if until <= now {
			delete(r.pow, id)
			k++
		}
	}
	k, wall := 0, ms(time.Now()) // codes expire by the wall clock, as Redis's keys
	for id, until := range r.codes {
		if k >= queue.MaxScan {
			break
		}
		if until <= wall {
			delete(r.codes, id)
			k++
		}
	}
	// A bucket at rest has no GCRA state in Redis (its key expired).
	k, real := 0, float64(time.Now().UnixNano())/1e9
	for id, tat := range r.enters {
		if k >= queue.MaxScan {
			break
		}
		if tat <= real {
			delete(r.enters, id)
			k++
		}
	}
	k = 0
	for id, b := range r.places {
		if k >= queue.MaxScan {
			break
		}
		if b.expires <= now {
			delete(r.places, id)
			k++
		}
	}
}

// horizon is how long, at most, until every slot of the room is free
// (ms): the latest deadline held, or a new slot's when none is.
func (r *room) horizon(st *queue.Settings, now int64) int64 {
	h := queue.SlotDeadline(st, now, now+st.SessionTTLS*1000)
	for _, d := range r.active {
		h = max(h, d)
	}
	return max(h-now, st.BatchIntervalMS)
}
