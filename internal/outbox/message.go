package outbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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

// HeaderIdempotencyKey carries the intent's idempotency key: the same for
// every intent of one visitor in one room, on whichever server it was taken.
const HeaderIdempotencyKey = "idempotency_key"

// Result statuses a consumer may report on the results topic.
const (
	ResultProcessed = "processed"
	ResultRejected  = "rejected"
)

// IntentMessage is the value of a message on the intents topic. Its key is
// MessageKey(Room, Visitor). Delivery is at least once, and two servers can
// race to take one visitor's intent: a checkout places at most one order
// per IdempotencyKey (and so drops repeated intent ids too).
type IntentMessage struct {
	IntentID       string          `json:"intent_id"`
	IdempotencyKey string          `json:"idempotency_key"`
	Room           string          `json:"room"`
	Visitor        string          `json:"visitor"`
	Payload        json.RawMessage `json:"payload"`
	AcceptedAt     time.Time       `json:"accepted_at"` // RFC 3339 with nanoseconds, UTC
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

// KeySecretLabel is what the servers derive IdempotencyKey's secret from
// the signing key by (token.Keyset.Derive): every server has the same.
const KeySecretLabel = "intent-idempotency-key"

// IdempotencyKey is the key of every intent one visitor leaves in one room:
// an HMAC of room and visitor under a secret every server shares (derived
// from the signing key), so any server computes the same key and nobody
// without the secret can forge one for another visitor. 32 hex digits.
func IdempotencyKey(secret []byte, room, visitor string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(room))
	m.Write([]byte{0})
	m.Write([]byte(visitor))
	return hex.EncodeToString(m.Sum(nil)[:16])
}
