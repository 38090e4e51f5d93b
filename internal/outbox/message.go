package outbox

import (
	"encoding/json"
	"time"
)

// Default topic and group names; each is configurable.
const (
	DefaultIntentsTopic = "waitroom.intents"
	DefaultResultsTopic = "waitroom.results"
	DefaultResultsGroup = "waitroom-results"
)

// HeaderIntentID is the Kafka header that carries the intent id on the
// intents topic, so a consumer can drop a duplicate without decoding the value.
const HeaderIntentID = "intent_id"

// Result statuses a consumer may report on the results topic.
const (
	ResultProcessed = "processed"
	ResultRejected  = "rejected"
)

// IntentMessage is the value of a message on the intents topic. Its key is
// MessageKey(Room, Visitor). Delivery is at least once: consumers must drop
// intent ids they have already handled.
type IntentMessage struct {
	IntentID   string          `json:"intent_id"`
	Room       string          `json:"room"`
	Visitor    string          `json:"visitor"`
	Payload    json.RawMessage `json:"payload"`
	AcceptedAt time.Time       `json:"accepted_at"` // RFC 3339 with nanoseconds, UTC
}

// ResultMessage is the value of a message on the results topic: the
// consumer's verdict on one intent. Reason is empty when processed.
type ResultMessage struct {
	IntentID string `json:"intent_id"`
	Status   string `json:"status"` // ResultProcessed or ResultRejected
	Reason   string `json:"reason"`
}

// MessageKey is the key of an intent's message: one visitor's intents in one
// room land on one partition, and so stay in order.
func MessageKey(room, visitor string) []byte {
	return []byte(room + "/" + visitor)
}
