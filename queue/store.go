package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors of the line, as values: adapters translate their own failures into
// these, and HTTP code maps only these to statuses.
var (
	ErrRoomNotFound   = errors.New("room not found")
	ErrTicketNotFound = errors.New("ticket not found")
	// ErrUnavailable: the store cannot be used now (unreachable, out of
	// memory, loading); the caller answers 503 and degraded mode counts it.
	ErrUnavailable = errors.New("queue: store unavailable")
	// ErrStoreDown: unavailable for certain (the connection was refused, or
	// the store answered that it cannot serve: out of memory, loading). It
	// matches ErrUnavailable too. A timeout is not certain: a server starved
	// of CPU times out on a store that answers, so degraded mode waits for a
	// timeout to last (Availability) but switches on ErrStoreDown at once.
	ErrStoreDown = fmt.Errorf("%w: down for certain", ErrUnavailable)
	// ErrBusy: every connection of this server to the store is in use. The
	// store is up and this server is overloaded, so the caller answers 503
	// and degraded mode does not count it: polling load alone must not turn
	// the line off.
	ErrBusy = errors.New("queue: store busy")
	// ErrProofRequired: a new place needs a proof-of-work solution and none came.
	ErrProofRequired = errors.New("queue: a new place needs a proof of work")
	// ErrProofSpent: the solution was already used for a place.
	ErrProofSpent = errors.New("queue: proof of work already spent")
)

// EntryProof is what a new place costs: nothing (the zero value), a
// solution that did not come (Required without ID), or a checked solution
// whose ID is spent once, remembered until Expires. Network is the client
// network the place is priced and counted for (clientip.Network; "" when
// unknown): a scheduled opening's draw takes one place a network a round
// (DrawOrder).
type EntryProof struct {
	Required bool
	ID       string
	Expires  time.Time
	Network  string
}

// ProofNone, ProofNeed and ProofSpend are what an EntryProof asks of the store.
const (
	ProofNone  = "none"  // a new place costs nothing
	ProofNeed  = "need"  // it costs a solution and none came
	ProofSpend = "spend" // a checked solution: spend its ID once
)

// Mode is what the proof asks of the store: ProofNone, ProofNeed or ProofSpend.
func (p EntryProof) Mode() string {
	switch {
	case !p.Required:
		return ProofNone
	case p.ID == "":
		return ProofNeed
	}
	return ProofSpend
}

// Stats are a room's counters.
type Stats struct {
	Waiting   int64 `json:"waiting"`
	Scheduled int64 `json:"scheduled"` // in the pre-queue of a scheduled opening
	Active    int64 `json:"active"`    // admission slots in use, Held included
	// Held are slots held after Redis lost its data, for entry tokens issued
	// before the loss, until the latest of them has expired (RestoreRoom).
	Held           int64   `json:"held,omitempty"`
	EnteredTotal   int64   `json:"entered_total"`
	AdmittedTotal  int64   `json:"admitted_total"`
	AbandonedTotal int64   `json:"abandoned_total"`
	ExpiredTotal   int64   `json:"expired_total"`
	CompletedTotal int64   `json:"completed_total"`
	AdmittedRate   float64 `json:"admitted_rate"` // admissions per second over the last minute, as measured: 0 when nobody was admitted

	// NoShowTotal and IdleTotal are the slots freed (and counted in
	// ExpiredTotal) because the visitor never came to checkout within
	// arrival_window_s, or came and then went quiet for idle_after_s.
	NoShowTotal int64 `json:"no_show_total"`
	IdleTotal   int64 `json:"idle_total"`
}

// TickResult is what one admission tick did.
type TickResult struct {
	Admitted  []string        // ticket ids admitted this tick, in order
	Waits     []time.Duration // how long each of them waited, same order
	Abandoned int64
	Reclaimed int64
	Purged    int64 // ended tickets deleted after their grace period
	// NoShows and Idle are the reclaimed slots (counted in Reclaimed too)
	// that lapsed before their session's end: never used, or left idle.
	NoShows, Idle int64
}

// The ports: what the line needs of a store. internal/store/redisstore keeps them in
// Redis, internal/store/memstore in this process's memory (the executable
// specification); internal/store/conformance runs the same behaviour against both.
// Each ticket operation (Enter, Status, Leave, Complete, Active, Hold, Tick,
// ClaimPlace, RestoreRoom) is atomic; PutRoom and DeleteRoom are not (a
// reader may see the settings before the room is listed).

// Rooms keeps rooms' settings.
type Rooms interface {
	PutRoom(ctx context.Context, room string, s Settings) error
	GetRoom(ctx context.Context, room string) (Settings, error)
	DeleteRoom(ctx context.Context, room string) error
	ListRooms(ctx context.Context) ([]string, error)
	// Epoch names the life of the store's data: it changes when the store
	// comes back empty (Redis restarted without persistence, flushed), or
	// with data older than a server saw (restarted from an older snapshot).
	Epoch(ctx context.Context) (Epoch, error)
	// RestoreRoom puts a room back unless it exists: a Redis restarted
	// without persistence comes back empty, and servers still know the rooms.
	// Either way the room's capacity is held until every entry token issued
	// before the loss has expired (now + jitter + session ttl).
	RestoreRoom(ctx context.Context, room string, s Settings, now time.Time) (bool, error)
}

// Epoch is the store's data epoch as one read saw it.
type Epoch struct {
	ID string
	// Rewound: this read found the data older than this server saw under
	// the same epoch (its clock went back) and started a new one; Clock is
	// the clock read, Seen the highest this server had seen.
	Rewound     bool
	Clock, Seen int64
}

// Tickets keeps the visitors' places.
type Tickets interface {
	// Enter returns the identity's live ticket in room, or a new one at the
	// back of the line (admitted at once when mode or the fast track allows).
	// A new one costs what gate says (ErrProofRequired, ErrProofSpent). A
	// newcomer who would wait in a line of s.MaxWaiting (when set) gets no
	// place but a ticket in vocab.StateFull.
	Enter(ctx context.Context, room string, s *Settings, mode Admission, identity, newTicketID string, now time.Time, jitter time.Duration, gate EntryProof) (Ticket, error)
	// Status reads a ticket for its owner and counts as a sign of life.
	Status(ctx context.Context, room string, s *Settings, ticketID, identity string, now time.Time) (Ticket, error)
	// StatusMany reads many tickets in one round trip, without an owner
	// check (the caller already checked when the connection opened), and
	// marks the waiting ones alive: an open push connection is a sign of life.
	// A ticket that is gone comes back with State vocab.StateExpired.
	StatusMany(ctx context.Context, room string, s *Settings, ticketIDs []string, now time.Time) ([]Ticket, error)
	// Leave gives up a ticket: a waiter leaves the line, an admitted user frees the slot.
	Leave(ctx context.Context, room, ticketID, identity string, now time.Time) error
	// Complete frees an admitted ticket's slot at once.
	Complete(ctx context.Context, room, ticketID string, now time.Time) error
	// Active reports whether an admitted ticket still holds a slot, or why not.
	Active(ctx context.Context, room, ticketID string, now time.Time) (bool, string, error)
	// Arrive is Active for a visit to checkout with the ticket's token. An
	// admitted slot lasts until the earliest of its expiry, its arrival
	// deadline (orderable_at + arrival_window_s, until the first Arrive)
	// and, with idle > 0, its idle deadline (the last Arrive + idle, moved
	// only when it gains at least idle/IdleStep, so that a busy visitor
	// costs one write per that long, not one per request).
	Arrive(ctx context.Context, room, ticketID string, now time.Time, idle time.Duration) (bool, string, error)
	// Hold reports whether holder may use the ticket's entry token, binding
	// it to holder when nobody holds it yet (HoldOwner, HoldFirst).
	Hold(ctx context.Context, room, ticketID, holder string, mode HoldMode, ttl time.Duration) (bool, error)
	// Handoff redeems a hand-off code of the ticket (nonce tells it from
	// the ticket's others) once: false when it was redeemed before. The
	// mark lasts codeTTL (the code's life). With a holder, the ticket's
	// token is bound to holder for holdTTL, in place of whoever held it.
	Handoff(ctx context.Context, room, ticketID, nonce, holder string, codeTTL, holdTTL time.Duration) (bool, error)
}

// Limits keeps the per-client limits (limits.go).
type Limits interface {
	ClaimPlace(ctx context.Context, room, bucket, identity string, limit int64, now time.Time) (int, error)
	ReleasePlace(ctx context.Context, room, bucket, identity string) error
	// PlacesHeld counts the live places claimed for bucket (ClaimPlace),
	// rechecking at most PlacesSweep of them, those checked least recently:
	// a place that ended counts until it is rechecked, so the count may be
	// high, never low, and a bucket of n members is rechecked whole every
	// n/PlacesSweep calls (a claim refused for want of price rechecks all).
	PlacesHeld(ctx context.Context, room, bucket string, now time.Time) (int64, error)
	AllowEnter(ctx context.Context, room, bucket string, perMinute int64) (bool, time.Duration, error)
}

// Ticks runs admission and counts.
type Ticks interface {
	// Tick runs one admission step for room at now with one jitter per slot.
	// Without draws it admits from the head; with draws (a random line, one
	// per slot, each in [0, DrawRange)) the k-th admission is the waiter at
	// rank draws[k] % waiting among those still waiting.
	Tick(ctx context.Context, room string, s *Settings, now time.Time, jitters []time.Duration, draws []uint64) (TickResult, error)
	Stats(ctx context.Context, room string, now time.Time) (Stats, error)
}

// Events carries admissions and room changes between the servers sharing a store.
type Events interface {
	// Listen delivers admissions and settings changes from every server
	// sharing the store, until ctx ends.
	Listen(ctx context.Context, onAdmit func(room string, adm []Admitted), onRoom func(room string)) error
}

// Admitted is a ticket a tick let in, as the admission's event tells every
// server: with its times, a server that knows the ticket shows it admitted
// without reading it. The times are zero when the event did not carry
// them (a server of the release before ticked): read the ticket then.
type Admitted struct {
	ID                     string
	At, Orderable, Expires time.Time
}

// AdmittedIDs are the tickets' ids.
func AdmittedIDs(adm []Admitted) []string {
	ids := make([]string, len(adm))
	for i, a := range adm {
		ids[i] = a.ID
	}
	return ids
}

// Drill is the availability probe and the deployment's degraded-mode drill.
type Drill interface {
	// Probe pings and reads the deployment's degraded-mode drill (nil: automatic).
	Probe(ctx context.Context) (*bool, error)
	// SetDrill stores the drill for every server; nil returns to automatic.
	SetDrill(ctx context.Context, on *bool) error
}

// Store is every port together: what NewLine takes.
type Store interface {
	Rooms
	Tickets
	Limits
	Ticks
	Events
	Drill
	Leases
	Draws
	Changes
}

// LogPos is a place in a room's change log: the entry's ID in the store's
// order, and N, its number (1, 2, 3, … from the room's first change), by
// which a reader sees that it missed entries (trimmed, or a room deleted).
type LogPos struct {
	ID string
	N  int64
}

// LogEntry is one operation's change to the line: the waiting scores it
// added and removed. A score is a waiter's place in the order of the line.
type LogEntry struct {
	LogPos
	Add, Del []float64
}

// Changes is the room's change log and what a server needs beside it to
// keep its own waiters' positions without reading each ticket: every
// operation that changes the set of waiting scores (enter, tick, leave,
// draw) appends one entry. The log is capped; a reader that fell behind
// reads a snapshot again.
type Changes interface {
	// LogHead is the newest entry (zero LogPos when there is none): a
	// snapshot read after it, then the entries after it, give the line.
	LogHead(ctx context.Context, room string) (LogPos, error)
	// LineScores returns up to limit waiting scores above after (all when
	// after is nil), lowest first.
	LineScores(ctx context.Context, room string, after *float64, limit int) ([]float64, error)
	// ReadLog returns up to limit entries after pos, oldest first, waiting
	// up to wait for the first (wait <= 0: not at all).
	ReadLog(ctx context.Context, room string, after LogPos, limit int, wait time.Duration) ([]LogEntry, error)
	// Alive marks waiting tickets seen at now, as a status read would: the
	// sign of life of many open connections in one call.
	Alive(ctx context.Context, room string, ids []string, now time.Time) error
	// Present replaces server's snapshot of its open connections in room:
	// every ticket in open counts as seen at now for as long as this is
	// server's latest snapshot (a tick drops nobody in a snapshot taken
	// within abandon_after_s). Its cost does not grow with the number of
	// waiters (a bitmap of seqs in Redis). A ticket that left the server
	// since its snapshot before must be marked with Alive first, or its
	// last sign of life goes back to its own.
	Present(ctx context.Context, room, server string, open []string, now time.Time) error
	// Rate is the room's measured admissions per second (0 when none).
	Rate(ctx context.Context, room string) (float64, error)
}

// A room's change log keeps about as many entries as people wait,
// within [LogKeepMin, LogKeep]: a reader further behind reads a snapshot,
// which costs no more than replaying. The Lua scripts write these as
// literals; a test holds them to it.
const (
	LogKeepMin = 500
	LogKeep    = 100_000
)

// LogKeeps is how many entries the log keeps while waiting wait.
func LogKeeps(waiting int) int { return min(LogKeep, max(LogKeepMin, waiting)) }
