package memstore

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// rank is a waiting ticket's 0-based place in the line, or -1.
func (r *room) rank(id string) int64 {
	rec, ok := r.tickets[id]
	if !ok {
		return -1
	}
	i := sort.Search(len(r.q), func(i int) bool { return r.q[i].score >= rec.score })
	if i < len(r.q) && r.q[i].id == id {
		return int64(i)
	}
	return -1
}

// unqueue takes id out of the line, if it is in it.
func (r *room) unqueue(id string) {
	if i := r.rank(id); i >= 0 {
		r.logDel(r.q[i].score)
		r.q = append(r.q[:i], r.q[i+1:]...)
	}
}

// view is a ticket as the store answers it, read at now.
func (r *room) view(room, id string, rec *record, now time.Time) queue.Ticket {
	t := queue.Ticket{
		Room: room, ID: id, Identity: rec.identity, State: rec.state, Reason: rec.reason,
		Seq: rec.seq, EntryPosition: rec.entryPos, Waiting: int64(len(r.q)), EnteredAt: time.UnixMilli(rec.entered),
		Rate: r.rate, Score: float64(rec.score),
	}
	if rec.state == vocab.StateWaiting {
		if k := r.rank(id); k >= 0 {
			t.Position = k + 1
		}
	}
	if rec.admitted > 0 {
		t.AdmittedAt = time.UnixMilli(rec.admitted)
		t.OrderableAt = time.UnixMilli(rec.orderable)
		t.ExpiresAt = time.UnixMilli(rec.expires)
	}
	t.Settle(now)
	return t
}

// live reports whether a record holds a place at now (ms).
func (rec *record) live(now int64) bool {
	return rec != nil && (rec.state == vocab.StateWaiting || rec.state == vocab.StateScheduled || (rec.state == vocab.StateAdmitted && rec.expires > now))
}

// counted reports whether a record counts for its client bucket's places at
// now (ms): while live, and a no-show until its session would have ended
// (held.lua's counted).
func (rec *record) counted(now int64) bool {
	return rec.live(now) || (rec != nil && rec.state == vocab.StateExpired && rec.reason == "no_show" && rec.expires > now)
}

// budgetAt is the tick that now falls in and the admissions it used; ticks
// are compared by their start, so a change of pace holds.
func (r *room) budgetAt(now, interval int64) (start, used int64) {
	start = now - now%interval
	bs, used := r.budget.start, r.budget.used
	if start > bs {
		return start, 0
	}
	return bs, used
}

// countAdmissions logs n admissions at now, after which occ slots are held.
func (r *room) countAdmissions(now, n, occ int64) {
	r.stats["admitted_total"] += n
	r.stats["win_sum"] += n
	r.admits = append(r.admits, admit{at: now, n: n, occ: occ})
}

func (s *Store) Enter(_ context.Context, room string, st *queue.Settings, mode queue.Admission, identity, newID string, now time.Time, jitter time.Duration, gate queue.EntryProof) (queue.Ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, n := s.room(room), ms(now)
	defer s.commitLog(r)
	if existing, ok := r.visitors[identity]; ok {
		if rec := r.tickets[existing]; rec != nil {
			if rec.state == vocab.StateWaiting {
				if _, ok := r.seen[existing]; ok {
					r.seen[existing] = n
				}
				return r.view(room, existing, rec, now), nil
			}
			if rec.state == vocab.StateScheduled {
				return r.view(room, existing, rec, now), nil
			}
			if rec.state == vocab.StateAdmitted && rec.expires > n {
				return r.view(room, existing, rec, now), nil
			}
		}
	}
	if mode == queue.AdmitClosed {
		return queue.Ticket{Room: room, State: vocab.StateClosed}, nil
	}
	// Line full: no place, and no proof spent on one.
	if st.MaxWaiting > 0 && mode != queue.AdmitOpen && int64(len(r.q)) >= st.MaxWaiting {
		return queue.Ticket{Room: room, State: vocab.StateFull}, nil
	}
	switch gate.Mode() {
	case queue.ProofNeed:
		return queue.Ticket{}, queue.ErrProofRequired
	case queue.ProofSpend:
		if until, ok := r.pow[gate.ID]; ok && until > n {
			return queue.Ticket{}, queue.ErrProofSpent
		}
		r.pow[gate.ID] = n + max(gate.Expires.Sub(now).Milliseconds(), 1)
	}
	r.seq++
	r.stats["entered_total"]++
	rec := &record{identity: identity, seq: r.seq, score: r.seq, state: vocab.StateWaiting, entered: n, network: gate.Network}
	if mode == queue.AdmitScheduled {
		// Before the opening: the pre-queue, unranked until the draw.
		rec.state = vocab.StateScheduled
		r.pre = append(r.pre, waiter{score: rec.seq, id: newID})
		r.tickets[newID] = rec
		r.visitors[identity] = newID
		return r.view(room, newID, rec, now), nil
	}
	admitted := mode == queue.AdmitOpen || (mode == queue.AdmitOpenIfEmpty && len(r.q) == 0)
	if mode == queue.AdmitLine && len(r.q) == 0 {
		// Fast track: only into an empty line, within capacity and this tick's budget.
		start, used := r.budgetAt(n, st.BatchIntervalMS)
		if used < st.BatchSize && r.live(n)+r.heldAt(n) < st.Capacity && !r.atUnarrivedLimit(st, rec.network, n) {
			r.budget.start, r.budget.used = start, used+1
			admitted = true
		}
	}
	if admitted {
		o := ms(now.Add(jitter))
		rec.state, rec.admitted, rec.orderable, rec.expires = vocab.StateAdmitted, n, o, o+st.SessionTTLS*1000
		r.active[newID] = queue.SlotDeadline(st, o, rec.expires)
		r.countAdmissions(n, 1, r.live(n)+r.heldAt(n))
	} else {
		r.q = append(r.q, waiter{score: rec.score, id: newID})
		r.logAdd(rec.score)
		r.seen[newID] = n
		rec.entryPos = int64(len(r.q))
	}
	r.tickets[newID] = rec
	r.visitors[identity] = newID
	return r.view(room, newID, rec, now), nil
}

// unarrived is how many admitted slots of network have not yet seen their
// visitor arrive, within their arrival window (queue.UnarrivedLimit).
func (r *room) unarrived(network string, now, window int64) int64 {
	var k int64
	for id := range r.active {
		if rec := r.tickets[id]; rec != nil && rec.network == network && !rec.arrived && rec.orderable+window > now {
			k++
		}
	}
	return k
}

// atUnarrivedLimit reports whether network holds as many unarrived slots
// as the room allows: its next place waits its turn.
func (r *room) atUnarrivedLimit(st *queue.Settings, network string, now int64) bool {
	limit := queue.UnarrivedLimit(st)
	return limit > 0 && network != "" && r.unarrived(network, now, st.ArrivalWindowS*1000) >= limit
}

// heldAt is the slots a restored room holds at now (ms) for entry tokens
// from before the data loss.
func (r *room) heldAt(now int64) int64 {
	if now < r.held.until {
		return r.held.n
	}
	return 0
}

// live counts slots held past now (ms).
func (r *room) live(now int64) int64 {
	var n int64
	for _, x := range r.active {
		if x > now {
			n++
		}
	}
	return n
}

func (s *Store) Status(_ context.Context, room string, _ *queue.Settings, id, identity string, now time.Time) (queue.Ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.status(room, id, identity, now)
	if !ok {
		return queue.Ticket{}, queue.ErrTicketNotFound
	}
	return t, nil
}

// status reads a ticket and marks a waiter alive; s.mu is held.
func (s *Store) status(room, id, identity string, now time.Time) (queue.Ticket, bool) {
	r := s.room(room)
	rec := r.tickets[id]
	if rec == nil || (identity != "" && rec.identity != identity) {
		return queue.Ticket{}, false
	}
	if rec.state == vocab.StateWaiting {
		if _, ok := r.seen[id]; ok {
			r.seen[id] = ms(now)
		}
	}
	return r.view(room, id, rec, now), true
}

func (s *Store) StatusMany(_ context.Context, room string, _ *queue.Settings, ids []string, now time.Time) ([]queue.Ticket, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]queue.Ticket, len(ids))
	for i, id := range ids {
		t, ok := s.status(room, id, "", now)
		if !ok {
			t = queue.Ticket{Room: room, ID: id, State: vocab.StateExpired, Reason: "unknown"}
		}
		out[i] = t
	}
	return out, nil
}

func (s *Store) Leave(_ context.Context, room, id, identity string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	defer s.commitLog(r)
	rec := r.tickets[id]
	if rec == nil || rec.identity != identity {
		return queue.ErrTicketNotFound
	}
	r.unqueue(id)
	r.unschedule(id)
	delete(r.seen, id)
	delete(r.active, id)
	if rec.state == vocab.StateWaiting || rec.state == vocab.StateScheduled || rec.state == vocab.StateAdmitted {
		rec.state, rec.reason = vocab.StateExpired, "left"
		r.ended[id] = ms(now)
	}
	return nil
}

func (s *Store) Complete(_ context.Context, room, id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	if _, ok := r.active[id]; !ok {
		return queue.ErrTicketNotFound
	}
	delete(r.active, id)
	if rec := r.tickets[id]; rec != nil {
		rec.state, rec.reason = vocab.StateExpired, "completed"
		r.ended[id] = ms(now)
	}
	r.stats["completed_total"]++
	return nil
}

func (s *Store) Active(_ context.Context, room, id string, now time.Time) (bool, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	return r.active1(id, ms(now))
}

// active1 is Active with s.mu held.
func (r *room) active1(id string, now int64) (bool, string, error) {
	deadline, held := r.active[id]
	if held && deadline > now {
		return true, "", nil
	}
	rec := r.tickets[id]
	switch {
	case rec == nil:
		return false, "unknown", nil
	case held && deadline < rec.expires:
		return false, queue.LapseReason(rec.arrived), nil // lapsed, not yet ticked
	case held || rec.reason == "":
		return false, "reclaimed", nil
	}
	return false, rec.reason, nil
}

// Arrive is arrive.lua in Go.
func (s *Store) Arrive(_ context.Context, room, id string, now time.Time, idle time.Duration) (bool, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, n := s.room(room), ms(now)
	ok, why, err := r.active1(id, n)
	if !ok {
		return ok, why, err
	}
	rec := r.tickets[id]
	if rec == nil { // a slot without a record: nothing to mark
		return true, "", nil
	}
	want := queue.IdleDeadline(n, idle.Milliseconds(), rec.expires)
	if !rec.arrived {
		rec.arrived = true
		r.active[id] = want
	} else if queue.MoveIdle(r.active[id], want, idle.Milliseconds()) {
		r.active[id] = want
	}
	return true, "", nil
}

func (s *Store) Hold(_ context.Context, room, id, who string, mode queue.HoldMode, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	rec := r.tickets[id]
	if rec == nil {
		return false, nil
	}
	if rec.identity == who {
		return true, nil
	}
	if mode == queue.HoldOwner && len(rec.identity) >= 2 && rec.identity[:2] == "v:" {
		return false, nil
	}
	// Redis expires the binding by its own clock; so does this store.
	h, ok := r.holders[id]
	if mode == queue.HoldOwner { // only a hand-off binds (Handoff)
		return ok && time.Now().Before(h.until) && h.who == who, nil
	}
	if !ok || !time.Now().Before(h.until) {
		r.holders[id] = holder{who: who, until: time.Now().Add(max(ttl, time.Millisecond))}
		return true, nil
	}
	return h.who == who, nil
}

func (s *Store) Handoff(_ context.Context, room, id, nonce, who string, codeTTL, holdTTL time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	// Redis expires the code's mark by its own clock; so does this store.
	n, key := ms(time.Now()), id+"/"+nonce
	if until, ok := r.codes[key]; ok && until > n {
		return false, nil
	}
	r.codes[key] = n + max(codeTTL.Milliseconds(), 1)
	if who != "" {
		r.holders[id] = holder{who: who, until: time.Now().Add(max(holdTTL, time.Millisecond))}
	}
	return true, nil
}

// rateString is the configured rate as the tick script gets it: 3 decimals.
func rateString(st *queue.Settings) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(st.ConfiguredRate(), 'f', 3, 64), 64)
	return f
}
