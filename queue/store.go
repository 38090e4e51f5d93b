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
)

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
	// back of the line (admitted at once when the fast track allows).
	Enter(ctx context.Context, room string, s *Settings, identity, newTicketID string, now time.Time, jitter time.Duration) (Ticket, error)
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
