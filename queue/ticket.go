package queue

import (
	"time"

	"github.com/waitroom/waitroom/queue/token"
)

// Ticket states as the API shows them.
const (
	StateWaiting  = "waiting"
	StateAdmitted = "admitted"
	StateExpired  = "expired" // abandoned, reclaimed, completed or left
	StateClosed   = "closed"  // the room has ended
)

// Ticket is one visitor's place in one room, as the store knows it.
type Ticket struct {
	Room          string
	ID            string
	Identity      string // "v:<visitor>" or "u:<user sub>"
	State         string
	Reason        string // why a ticket is expired: abandoned, reclaimed, completed, left
	Seq           int64  // arrival order from the room's INCR sequence
	Position      int64  // 1-based among live waiters; 0 unless waiting
	EntryPosition int64  // position when the ticket joined the line
	Waiting       int64  // live waiters in the room
	EnteredAt     time.Time
	AdmittedAt    time.Time // zero unless admitted
	OrderableAt   time.Time // admission time + jitter
	ExpiresAt     time.Time // OrderableAt + session TTL
	Rate          float64   // measured admissions per second over the last minute; 0 if none
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
