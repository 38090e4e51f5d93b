package queue

import (
	"context"
	"errors"
	"time"
)

// Errors the store returns; callers map them to statuses.
var (
	ErrRoomNotFound   = errors.New("room not found")
	ErrTicketNotFound = errors.New("ticket not found")
	// ErrProofRequired: a new place needs a proof-of-work solution and none came.
	ErrProofRequired = errors.New("queue: a new place needs a proof of work")
	// ErrProofSpent: the solution was already used for a place.
	ErrProofSpent = errors.New("queue: proof of work already spent")
)

// EntryProof is what a new place costs: nothing (the zero value), a
// solution that did not come (Required without ID), or a checked solution
// whose ID is spent once, remembered until Expires.
type EntryProof struct {
	Required bool
	ID       string
	Expires  time.Time
}

func (p EntryProof) mode() string {
	switch {
	case !p.Required:
		return "none"
	case p.ID == "":
		return "need"
	}
	return "spend"
}

// Stats are a room's counters.
type Stats struct {
	Waiting        int64   `json:"waiting"`
	Active         int64   `json:"active"`
	EnteredTotal   int64   `json:"entered_total"`
	AdmittedTotal  int64   `json:"admitted_total"`
	AbandonedTotal int64   `json:"abandoned_total"`
	ExpiredTotal   int64   `json:"expired_total"`
	CompletedTotal int64   `json:"completed_total"`
	AdmittedRate   float64 `json:"admitted_rate"` // per second over the last minute
}

// TickResult is what one admission tick did.
type TickResult struct {
	Admitted  []string        // ticket ids admitted this tick, in order
	Waits     []time.Duration // how long each of them waited, same order
	Abandoned int64
	Reclaimed int64
	Purged    int64 // ended tickets deleted after their grace period
}

// Store keeps rooms and their lines. Every multi-step change is atomic.
type Store interface {
	// Rooms
	PutRoom(ctx context.Context, room string, s Settings) error
	GetRoom(ctx context.Context, room string) (Settings, error)
	DeleteRoom(ctx context.Context, room string) error
	// Epoch names the life of Redis's data: it changes when Redis comes
	// back empty (restarted without persistence, flushed).
	Epoch(ctx context.Context) (string, error)
	// RestoreRoom puts a room back unless it exists: a Redis restarted
	// without persistence comes back empty, and servers still know the rooms.
	// The room's capacity is held until every entry token issued before the
	// loss has expired (now + jitter + session ttl).
	RestoreRoom(ctx context.Context, room string, s Settings, now time.Time) (bool, error)
	ListRooms(ctx context.Context) ([]string, error)

	// Enter returns the identity's live ticket in room, or a new one at the
	// back of the line (admitted at once when the fast track allows). A new
	// one costs what gate says (ErrProofRequired, ErrProofSpent).
	// lineClosed says an adaptive room's line is closed: admit at once, but
	// never ahead of people still waiting. It travels beside the settings,
	// never inside them.
	Enter(ctx context.Context, room string, s *Settings, lineClosed bool, identity, newTicketID string, now time.Time, jitter time.Duration, gate EntryProof) (Ticket, error)
	// Status reads a ticket for its owner and counts as a sign of life.
	Status(ctx context.Context, room string, s *Settings, ticketID, identity string, now time.Time) (Ticket, error)
	// StatusMany reads many tickets in one pipelined round trip, without an
	// owner check (the caller already checked when the connection opened),
	// and marks the waiting ones alive: an open push connection is a sign of life.
	// A ticket that is gone comes back with State StateExpired.
	StatusMany(ctx context.Context, room string, s *Settings, ticketIDs []string, now time.Time) ([]Ticket, error)
	// Leave gives up a ticket: a waiter leaves the line, an admitted user frees the slot.
	Leave(ctx context.Context, room, ticketID, identity string, now time.Time) error
	// Complete frees an admitted ticket's slot at once.
	Complete(ctx context.Context, room, ticketID string, now time.Time) error
	// Active reports whether an admitted ticket still holds a slot, or why not.
	Active(ctx context.Context, room, ticketID string, now time.Time) (bool, string, error)
	// Hold reports whether holder may use the ticket's entry token, binding
	// it to holder when nobody holds it yet (HoldOwner, HoldFirst).
	Hold(ctx context.Context, room, ticketID, holder, mode string, ttl time.Duration) (bool, error)

	// ClaimPlace, ReleasePlace and AllowEnter keep the per-client limits
	// (limits.go).
	ClaimPlace(ctx context.Context, room, bucket, identity string, limit int64, now time.Time) (int, error)
	ReleasePlace(ctx context.Context, room, bucket, identity string) error
	AllowEnter(ctx context.Context, room, bucket string, perMinute int64) (bool, time.Duration, error)

	// Tick runs one admission step for room at now with one jitter per slot.
	Tick(ctx context.Context, room string, s *Settings, now time.Time, jitters []time.Duration) (TickResult, error)
	Stats(ctx context.Context, room string, now time.Time) (Stats, error)

	// Listen delivers admissions and settings changes from every server
	// sharing the store, until ctx ends.
	Listen(ctx context.Context, onAdmit func(room string, ids []string), onRoom func(room string)) error

	// Probe pings and reads the deployment's degraded-mode drill (nil: automatic).
	Probe(ctx context.Context) (*bool, error)
	// SetDrill stores the drill for every server; nil returns to automatic.
	SetDrill(ctx context.Context, on *bool) error
}
