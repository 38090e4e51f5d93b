package shop

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/segmentio/kafka-go"
)

// decide places the order of one intent and says what to answer. Only a
// store failure is an error (retried); a bad message is a rejection.
func (c *Consumer) decide(ctx context.Context, m kafka.Message) (Result, error) {
	var in Intent
	jerr := json.Unmarshal(m.Value, &in)
	if in.IntentID == "" {
		in.IntentID = header(m, intentIDHeader)
	}
	if in.IntentID == "" {
		c.rejected.Add(1)
		c.log.Error("shop: consume: intent without intent_id, cannot answer it",
			"partition", m.Partition, "offset", m.Offset, "err", jerr)
		return Result{}, nil
	}
	reject := func(reason string, err error) (Result, error) {
		c.rejected.Add(1)
		c.log.Info("shop: intent rejected", "intent_id", in.IntentID, "reason", reason, "err", err)
		return Result{IntentID: in.IntentID, Status: ResultRejected, Reason: reason}, nil
	}
	if jerr != nil {
		return reject(ReasonInvalidPayload, jerr)
	}
	order, err := parseOrder(in.Payload)
	if err != nil {
		return reject(ReasonInvalidPayload, err)
	}
	// One order per visitor and room: two servers may each have taken an
	// intent of the same visitor (a race, or Kafka down), with two intent
	// ids but one idempotency key. The second gets the first's answer.
	key := in.IdempotencyKey
	if key == "" {
		key = in.IntentID // from a waitroom before idempotency keys
	}
	out, err := c.store.PlaceOrder(ctx, key, order.Product, order.Quantity, SourceKafka)
	if errors.Is(err, ErrInvalidOrder) {
		return reject(ReasonInvalidPayload, err)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{IntentID: in.IntentID, Status: ResultProcessed}
	if out.Status == StatusSoldOut {
		res.Status, res.Reason = ResultRejected, ReasonSoldOut
	}
	switch {
	case out.Replayed:
		c.duplicates.Add(1)
	case out.Status == StatusPlaced:
		c.processed.Add(1)
	default:
		c.rejected.Add(1)
	}
	c.log.Debug("shop: intent answered", "intent_id", in.IntentID, "status", res.Status,
		"reason", res.Reason, "replayed", out.Replayed)
	return res, nil
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
