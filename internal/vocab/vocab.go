// Package vocab is the line's vocabulary, defined once: ticket states, end
// reasons, the waiting page's display states, activation and admission
// modes, and the Redis key prefix. It imports nothing, so the gate
// middleware shops build can use it without dragging in echo, templ or
// go-redis.
//
// The Lua scripts and the page's TypeScript read the same words from tables
// generated from this package (gen): run go generate ./internal/vocab after
// changing a word here, and commit what it writes.
package vocab

//go:generate go run ./gen

// State is a ticket's state as the API, pages, push and gate show it.
type State string

// Ticket states. A new state is one more line here.
const (
	StateWaiting State = "waiting"
	// StateScheduled: in the pre-queue of a scheduled opening, unranked
	// until the opening's draw gives it a random place.
	StateScheduled State = "scheduled"
	StateAdmitted  State = "admitted"
	StateExpired   State = "expired"  // abandoned, reclaimed, completed or left
	StateClosed    State = "closed"   // the room has ended
	StateBypassed  State = "bypassed" // waitroom is degraded: intents instead of a line
	StateSoldOut   State = "sold_out" // the operator ended the sale: no place is taken or moves
	StateFull      State = "full"     // the line holds max_waiting: no new place, try again later
	// StateOrdered: the visitor left an intent while the line was down
	// (degraded mode) and checkout did not reject it; that is their one
	// order in the room, so no place in the line (unless the room's
	// checkout_after_intent allows both).
	StateOrdered State = "ordered"
)

// Method is how a room's line admits, as its settings spell it.
type Method string

// Queueing methods of a room.
const (
	MethodFIFO        Method = "fifo"        // first come, first admitted
	MethodRandom      Method = "random"      // each admission draws uniformly among those waiting
	MethodPassthrough Method = "passthrough" // no line: everyone admitted at once, counted
	MethodReject      Method = "reject"      // nobody gets a place: a closed page, for maintenance
)

// Activation is when a room's line is on.
type Activation string

// Activation modes of a room, as its settings spell them.
const (
	ActivationAlways Activation = "always" // the line is always on
	ActivationOff    Activation = "off"    // no line: every entry is admitted at once
	// ActivationAdaptive opens the line when a load signal passes its
	// threshold and closes it when checkout is cool again.
	ActivationAdaptive Activation = "adaptive"
)

// Admission is how one enter is admitted, decided in Go from the room's
// settings and the time; the store applies it.
type Admission string

// Admission modes of an enter.
const (
	AdmitLine        Admission = "line"          // join the back of the line (fast track when it allows)
	AdmitClosed      Admission = "closed"        // the room has ended: no new place
	AdmitOpen        Admission = "open"          // no line: admitted at once while capacity lasts
	AdmitOpenIfEmpty Admission = "open_if_empty" // adaptive line closed: at once, unless people still wait
	AdmitPaused      Admission = "paused"        // a place in the line, nobody admitted
	AdmitScheduled   Admission = "scheduled"     // before the opening: a place in the pre-queue, drawn at the opening
)

// KeyPrefix starts every Redis key of a deployment.
const KeyPrefix = "wr:"

// Why a ticket ended (State expired), as the API, pages and verify say it.
// A new reason is one more line here and in Reasons.
const (
	ReasonAbandoned = "abandoned" // a waiter showed no sign of life for abandon_after_s
	ReasonReclaimed = "reclaimed" // the session ran out (session_ttl_s)
	ReasonCompleted = "completed" // checkout said the order was placed
	ReasonLeft      = "left"      // the visitor gave the place up
	// ReasonNoShow: admitted, but never came to checkout within
	// arrival_window_s of orderable_at; the slot went to the next in line.
	ReasonNoShow = "no_show"
	// ReasonIdle: came to checkout, then made no request at the gate for
	// idle_after_s; the slot went to the next in line.
	ReasonIdle = "idle"
)

// Why a ticket reads closed (State closed).
const (
	ReasonEnded       = "ended"       // the room's ends_at has passed
	ReasonMaintenance = "maintenance" // the queueing method is reject
)

// Lapsed reports whether reason is a slot the visitor lost for not using it
// (no-show or idle): the waiting page says so and offers to join again.
func Lapsed(reason string) bool { return reason == ReasonNoShow || reason == ReasonIdle }
