package queue

import "sync/atomic"

// HeldIntents is what the line asks of degraded mode's outbox: the intent
// that stands for a visitor's one order in a room (accepted, published or
// processed; a rejected one does not), on any server. The server wires its
// outbox in (SetIntents); without one nobody has an intent.
type HeldIntents interface {
	HeldIntent(room, identity string) (intentID string, ok bool)
}

// intentsBox holds the line's HeldIntents, set once the outbox is open.
type intentsBox struct{ v atomic.Pointer[HeldIntents] }

// SetIntents wires the outbox in: an entry token then names the intent its
// holder left (the "intent" claim), so checkout can refuse a second order.
func (l *Line) SetIntents(h HeldIntents) { l.intents.v.Store(&h) }

// HeldIntent is the visitor's intent that holds their one order in room.
func (l *Line) HeldIntent(room, identity string) (string, bool) {
	h := l.intents.v.Load()
	if h == nil || *h == nil || identity == "" {
		return "", false
	}
	return (*h).HeldIntent(room, identity)
}
