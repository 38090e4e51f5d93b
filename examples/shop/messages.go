package shop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// These mirror waitroom's message format on the wire; the shop keeps its own
// copies, as a real shop would not import waitroom's internals.

// Intent is a checkout request that waitroom accepted while its line was down.
// Key on the topic: room + "/" + visitor; header intent_id.
type Intent struct {
	IntentID string `json:"intent_id"`
	// IdempotencyKey is one per visitor and room, whichever server took
	// the intent: the shop places one order per key.
	IdempotencyKey string          `json:"idempotency_key"`
	Room           string          `json:"room"`
	Visitor        string          `json:"visitor"`
	Payload        json.RawMessage `json:"payload"`
	AcceptedAt     time.Time       `json:"accepted_at"`
}

// OrderRequest is the shop's reading of an intent's payload.
type OrderRequest struct {
	Product  string `json:"product"`
	Quantity int    `json:"quantity"`
}

// Result tells waitroom what became of an intent. Key on the topic: intent_id.
type Result struct {
	IntentID string `json:"intent_id"`
	Status   string `json:"status"` // ResultProcessed or ResultRejected
	Reason   string `json:"reason"`
}

// Result statuses and the reasons a rejection gives.
const (
	ResultProcessed = "processed"
	ResultRejected  = "rejected"

	ReasonSoldOut        = "sold_out"
	ReasonInvalidPayload = "invalid_payload"
)

// intentIDHeader carries the intent_id, so an unreadable value can still be answered.
const intentIDHeader = "intent_id"

// parseOrder reads a payload such as {"product":"sneaker-drop","quantity":1}.
// Fields it does not know are let through: waitroom passes the visitor's
// payload on as it came.
func parseOrder(raw json.RawMessage) (OrderRequest, error) {
	var o OrderRequest
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return o, fmt.Errorf("shop: read payload: not a JSON object")
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return o, fmt.Errorf("shop: read payload: %w", err)
	}
	if o.Product == "" {
		return o, fmt.Errorf("shop: read payload: no product")
	}
	return o, nil
}
