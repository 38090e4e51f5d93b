package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// While Redis is down an intent is all it takes to ask for stock, so each
// one must come from a real, distinct person: one open intent per visitor
// only holds if a request cannot mint visitors at will. A visitor who had a
// place before the outage keeps its identity (user token, or visitor
// cookie with its place mark: identity.go); one without must pass the
// NewcomerCheck first, and a cookie without a mark is refused where no
// challenge is asked. Each server also counts the
// room's per-client limits by itself (intent_limits.go), and max_quantity
// caps what one intent asks for.

// NewcomerCheck decides whether a request that carries no identity may
// become a new visitor while degraded (the proof-of-work challenge plugs in
// here). Admit returns nil to let it in (a visitor cookie is then set), or
// the error to answer with. Config.Newcomers; nil is workForNewcomers.
type NewcomerCheck interface {
	AdmitNewcomer(c echo.Context, room string, s queue.Settings) error
}

// workForNewcomers is the default NewcomerCheck: with proof of work on, a
// newcomer is let in to be asked for a solved challenge (acceptIntent asks
// everyone); without it, no identity, no intent.
type workForNewcomers struct{}

func (workForNewcomers) AdmitNewcomer(_ echo.Context, _ string, s queue.Settings) error {
	if s.BotProtection.PowOn() {
		return nil
	}
	return errNewcomer
}

var (
	errNewcomer = errorf(http.StatusForbidden, "newcomer_refused",
		"the line is down, and only visitors who were in it before may leave a request now; come back when it is up")
	// errNoPlaceBefore: a visitor cookie, but no mark of a place in this
	// room's line (a cookie minted without work, e.g. by GET …/challenge).
	errNoPlaceBefore = errorf(http.StatusForbidden, "newcomer_refused",
		"the line is down, and this visitor held no place in it before (a visitor cookie alone is not enough): only visitors who were in the line may leave a request now; come back when it is up")
)

// intentGuard is what stands between a request and the outbox.
type intentGuard struct {
	newcomers NewcomerCheck
	limits    *intentLimits
	work      powGate
}

// intentVisitor is the identity an intent is taken under: the visitor's
// own from before the outage (a user token, or a visitor cookie waitroom
// handed out: a made-up one is no identity), or a new one the NewcomerCheck
// allowed.
func (g intentGuard) intentVisitor(c echo.Context, ids identities, room string, s queue.Settings) (string, error) {
	if t := bearer(c); t != "" {
		return ids.fromUserToken(s, t)
	}
	if v := visitorID(c); v != "" && (ids.vids == nil || ids.vids.IssuedVisitorID(v)) {
		// The cookie alone costs nothing (GET …/challenge hands one out):
		// it is a known visitor only with its mark of a place in this room,
		// or where every intent costs a solved challenge anyway.
		if ids.vids == nil || s.BotProtection.PowOn() || ids.heldPlace(c, room, v) {
			return queue.VisitorIdentity(v), nil
		}
		return "", errNoPlaceBefore
	}
	if err := g.newcomers.AdmitNewcomer(c, room, s); err != nil {
		return "", err
	}
	identity, err := ids.forEnter(c, s, "")
	if err == nil && !s.BotProtection.PowOn() {
		// Let in by the check: known from now on. (With proof of work
		// every intent pays anyway, and the mark would outlive a refusal.)
		ids.markPlace(c, room, identity)
	}
	return identity, err
}

// checkQuantity holds an intent's payload "quantity" to the room's
// max_quantity (0: no cap): an integer from 1 to the cap.
func checkQuantity(s queue.Settings, payload json.RawMessage) error {
	if s.MaxQuantity <= 0 {
		return nil
	}
	var p struct {
		Quantity json.RawMessage `json:"quantity"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Quantity == nil {
		return nil // not an object the room can read a quantity from: the shop decides
	}
	q, err := strconv.ParseInt(string(bytes.TrimSpace(p.Quantity)), 10, 64)
	if err != nil || q < 1 || q > s.MaxQuantity {
		return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "quantity",
			Message: fmt.Sprintf("quantity: must be a whole number from 1 to %d (max_quantity)", s.MaxQuantity)}
	}
	return nil
}
