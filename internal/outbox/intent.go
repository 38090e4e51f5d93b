package outbox

import (
	"encoding/json"
	"errors"
	"time"
)

// MaxPayloadBytes bounds an intent's payload. The HTTP side checks it first;
// the store checks again so no caller can grow a Kafka message past it.
const MaxPayloadBytes = 8 << 10

// Errors callers map to statuses.
var (
	ErrNotFound        = errors.New("intent not found")
	ErrInvalidIntent   = errors.New("room and visitor are required")
	ErrInvalidPayload  = errors.New("payload is not JSON")
	ErrPayloadTooLarge = errors.New("payload too large")
	ErrClosed          = errors.New("outbox closed")
	// ErrWriteFailed: the outbox's disk refused the write (full, read-only,
	// I/O error). Nothing was taken; the caller may try again later.
	ErrWriteFailed = errors.New("outbox cannot write")
)

// Status is an intent's state as the API names it. The outbox table keeps
// PENDING, PUBLISHED, PROCESSED and REJECTED for the same four.
type Status string

const (
	StatusAccepted  Status = "accepted"  // durably written, not yet in Kafka
	StatusPublished Status = "published" // acknowledged by all in-sync replicas
	StatusProcessed Status = "processed" // final: checkout took it
	StatusRejected  Status = "rejected"  // final: checkout refused it, see Reason
)

// Open reports whether the intent still waits for checkout's verdict.
func (s Status) Open() bool { return s == StatusAccepted || s == StatusPublished }

// Holds reports whether the intent stands for the visitor's one order in
// its room: open or processed. Only a rejected intent frees the visitor
// for a new one (or for the line).
func (s Status) Holds() bool { return s != StatusRejected && s != "" }

// Intent is one visitor's checkout request kept in the outbox.
type Intent struct {
	ID          string          `json:"intent_id"`
	Room        string          `json:"room"`
	Visitor     string          `json:"-"`
	Key         string          `json:"-"` // idempotency key: IdempotencyKey(room, visitor)
	Payload     json.RawMessage `json:"-"`
	Status      Status          `json:"status"`
	Reason      string          `json:"reason,omitempty"`
	AcceptedAt  time.Time       `json:"accepted_at"`
	PublishedAt time.Time       `json:"-"` // zero until published
	FinishedAt  time.Time       `json:"-"` // zero until processed or rejected
}

// Message is the intent as it goes to the intents topic.
func (in Intent) Message() IntentMessage {
	return IntentMessage{
		IntentID:       in.ID,
		IdempotencyKey: in.Key,
		Room:           in.Room,
		Visitor:        in.Visitor,
		Payload:        in.Payload,
		AcceptedAt:     in.AcceptedAt,
	}
}

// Counts are the outbox's intents by status, for the dashboard and metrics.
type Counts struct {
	Accepted  int64 `json:"accepted"` // not yet published
	Published int64 `json:"published"`
	Processed int64 `json:"processed"`
	Rejected  int64 `json:"rejected"`
}

// Total is every intent ever accepted.
func (c Counts) Total() int64 { return c.Accepted + c.Published + c.Processed + c.Rejected }

func (c *Counts) add(s Status, n int64) {
	switch s {
	case StatusAccepted:
		c.Accepted += n
	case StatusPublished:
		c.Published += n
	case StatusProcessed:
		c.Processed += n
	case StatusRejected:
		c.Rejected += n
	}
}

func (c *Counts) plus(d Counts) {
	c.Accepted += d.Accepted
	c.Published += d.Published
	c.Processed += d.Processed
	c.Rejected += d.Rejected
}
