package queue

import (
	"time"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
)

// State is a ticket's state (internal/vocab defines them).
type State = vocab.State

// Ticket is one visitor's place in one room, as the store knows it.
type Ticket struct {
	Room          string
	ID            string
	Identity      string // "v:<visitor>" or "u:<user sub>"
	State         State
	Reason        string // why a ticket is expired (abandoned, reclaimed, completed, left) or closed (ended, maintenance)
	Seq           int64  // arrival order from the room's INCR sequence
	Position      int64  // 1-based among live waiters; 0 unless waiting
	EntryPosition int64  // position when the ticket joined the line
	Waiting       int64  // live waiters in the room
	EnteredAt     time.Time
	AdmittedAt    time.Time // zero unless admitted
	OrderableAt   time.Time // admission time + jitter
	ExpiresAt     time.Time // OrderableAt + session TTL
	Rate          float64   // measured admissions per second over the last minute; 0 if none
	// Score is a waiting ticket's place in the order of the line (the
	// room's q), as StatusMany reads it: the key of its local position
	// (Positions). Its seq, or its drawn place.
	Score float64
	// Stale: the store could not be read, and this is the ticket as this
	// server last knew it (Waiters.Status).
	Stale bool
}

// VisitorIdentity is the line's name for the visitor whose cookie holds id.
// It is a hash, not the cookie itself, because the identity becomes the
// entry token's sub, and tokens travel in URLs, logs and to checkout: the
// cookie must not be readable from a token.
func VisitorIdentity(cookie string) string {
	return "v:" + token.VisitorSubject(cookie)
}

// Subject is the identity as it goes into the entry token's sub claim.
func (t *Ticket) Subject() string {
	if len(t.Identity) > 2 {
		return t.Identity[2:]
	}
	return t.Identity
}

// Settle applies the rules of reading a ticket at now, whatever the store:
// an admitted ticket past its expiry is reclaimed, and a waiting ticket
// without a position was dropped between the record write and the read.
func (t *Ticket) Settle(now time.Time) {
	if t.State == vocab.StateAdmitted && !now.Before(t.ExpiresAt) {
		t.State, t.Reason = vocab.StateExpired, vocab.ReasonReclaimed
	}
	if t.State == vocab.StateWaiting && t.Position == 0 {
		t.State, t.Reason = vocab.StateExpired, vocab.ReasonAbandoned
	}
}

// IdleStep: an idle deadline is set idle_after_s + idle_after_s/IdleStep
// after a visit, and moved (a store write) only when it would gain at least
// idle_after_s/IdleStep: a busy visitor costs one write per quarter of
// idle_after_s, and a quiet one lapses after between idle_after_s and 5/4
// of it without a request, never sooner.
const IdleStep = 4

// SlotDeadline is when an admitted ticket's slot lapses unless its visitor
// arrives: the end of its arrival window (arrival_window_s after
// orderable, ms), or its expiry when that comes first or the window is off.
func SlotDeadline(s *Settings, orderable, expires int64) int64 {
	w := max(s.ArrivalWindowS, -s.ArrivalWindowS) // negative while held (HoldLapses)
	if w == 0 {
		return expires
	}
	return min(expires, orderable+w*1000)
}

// UnarrivedLimit is the most admitted slots one client network may hold
// whose visitors have not arrived (unarrived_per_network), or 0 when there
// is no limit: the setting is off, or arrivals are not seen (the arrival
// window is off, or held in degraded mode), so that a slot would count
// until its session ended. A network at the limit keeps its waiting places
// where they are; the admission passes over them, at most MaxScan a tick
// (past that it admits them in turn, as if there were no limit), and takes
// them as soon as one of the network's slots is used or lapses. A slot
// counts until its visitor arrives or its window ends (orderable +
// arrival_window_s), whichever comes first.
func UnarrivedLimit(s *Settings) int64 {
	if s.ArrivalWindowS <= 0 {
		return 0
	}
	return max(s.BotProtection.UnarrivedPerNetwork, 0)
}

// HoldLapses marks a tick's settings for a time when arrivals cannot be
// seen (degraded mode: the gate verifies offline, nothing is recorded), and
// a while after: a negative arrival window, so the tick gives a slot that
// falls due before its expiry a new deadline (now + the window, or
// idle_after_s and a quarter) instead of taking it from a visitor who may
// be at checkout.
func HoldLapses(s *Settings) {
	if s.ArrivalWindowS <= 0 && s.IdleAfterS <= 0 {
		return
	}
	s.ArrivalWindowS = -max(s.ArrivalWindowS, s.IdleAfterS+s.IdleAfterS/IdleStep, 1)
}

// IdleDeadline is the slot's deadline after a visit at now (ms) with an
// idle limit of idle ms (IdleStep): its expiry when idle is 0.
func IdleDeadline(now, idle, expires int64) int64 {
	if idle <= 0 {
		return expires
	}
	return min(expires, now+idle+idle/IdleStep)
}

// MoveIdle reports whether a visit moves the slot's deadline from cur to
// want: it differs by at least idle/IdleStep (a visitor who arrived before
// idle_after_s was set gets the new deadline at its next visit).
func MoveIdle(cur, want, idle int64) bool {
	d := want - cur
	if d < 0 {
		d = -d
	}
	return d > 0 && d >= idle/IdleStep
}

// LapseReason is why a slot that lapsed before its expiry ended.
func LapseReason(arrived bool) string {
	if arrived {
		return vocab.ReasonIdle
	}
	return vocab.ReasonNoShow
}
