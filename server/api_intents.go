package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
)

// intentStore is what the intent handlers need of the durable outbox; its
// Accept hands new intents to the relay at once.
type intentStore interface {
	Accept(ctx context.Context, room, visitor string, payload json.RawMessage) (outbox.Intent, bool, error)
	Get(ctx context.Context, id string) (outbox.Intent, error)
	// Find is the visitor's intent in room that checkout did not reject.
	Find(ctx context.Context, room, visitor string) (outbox.Intent, bool, error)
	// Writable is nil while the outbox's disk takes writes.
	Writable(ctx context.Context) error
}

// outboxRetryAfter is how long a visitor waits before trying again when
// the outbox cannot write: the readiness probe's period, about.
const outboxRetryAfter = 5 * time.Second

// errOutboxWrite: the outbox's disk refused the intent (full, read-only,
// failing). Nothing was taken; /readyz is 503 meanwhile, so a balancer
// moves the visitor to another server.
var errOutboxWrite = &apiError{Status: http.StatusServiceUnavailable, Code: "outbox_unavailable",
	Message:    "this server cannot save intents right now (its outbox cannot write to disk); nothing was taken: try again in a moment",
	RetryAfter: outboxRetryAfter}

var errNotDegraded = errorf(http.StatusConflict, "not_degraded",
	"intents are only taken while the waiting room is degraded; enter the line instead")

type intentJSON struct {
	IntentID   string `json:"intent_id"`
	Room       string `json:"room"`
	Status     string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	AcceptedAt string `json:"accepted_at"`
}

func newIntentJSON(in outbox.Intent) intentJSON {
	return intentJSON{IntentID: in.ID, Room: in.Room, Status: string(in.Status), Reason: in.Reason,
		AcceptedAt: in.AcceptedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
}

// intentMapper turns outbox errors into API errors.
func intentError(err error) error {
	switch {
	case errors.Is(err, outbox.ErrNotFound):
		return errorf(http.StatusNotFound, "intent_not_found", "no such intent for this visitor")
	case errors.Is(err, outbox.ErrPayloadTooLarge):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Field: "payload", Message: "payload: must be at most 8 KiB"}
	case errors.Is(err, outbox.ErrInvalidPayload):
		return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "payload", Message: "payload: must be a JSON object"}
	case errors.Is(err, outbox.ErrClosed):
		return errUnavailable
	case errors.Is(err, outbox.ErrWriteFailed):
		return errOutboxWrite
	}
	return err
}

// acceptIntent is shared by the API and the accept page's form: it checks
// the room and mode, finds the visitor, holds the client to its limits and,
// with proof of work on, to a solved challenge (powPayload), and writes the
// intent durably. While Redis is down a visitor cookie from before is only
// known by its MAC, which any request could have fetched, so with proof of
// work on everyone pays once; the cookie still names the visitor.
func acceptIntent(c echo.Context, rooms cachedRooms, deg degradeFlag, ids identities, g intentGuard, store intentStore, room string, payload json.RawMessage, powPayload string) (outbox.Intent, error) {
	if !deg.Degraded() {
		return outbox.Intent{}, errNotDegraded
	}
	s, ok := rooms.CachedSettings(room)
	if !ok {
		return outbox.Intent{}, errRoomNotFound // see bypassed
	}
	if len(payload) > outbox.MaxPayloadBytes {
		return outbox.Intent{}, intentError(outbox.ErrPayloadTooLarge)
	}
	if t := strings.TrimSpace(string(payload)); !strings.HasPrefix(t, "{") {
		return outbox.Intent{}, intentError(outbox.ErrInvalidPayload)
	}
	if err := checkQuantity(s, payload); err != nil {
		return outbox.Intent{}, err
	}
	visitor, err := g.intentVisitor(c, ids, room, s)
	if err != nil {
		return outbox.Intent{}, err
	}
	if err := g.work.spendLocal(c.Request().Context(), s, room, visitor, powPayload); err != nil {
		return outbox.Intent{}, err
	}
	now := ids.now()
	held, err := g.limits.reserve(room, clientip.Bucket(c.RealIP()), visitor, &s, now)
	if err != nil {
		return outbox.Intent{}, err
	}
	in, created, err := store.Accept(c.Request().Context(), room, visitor, payload)
	if created {
		held.created()
		g.work.count(room, history.Intents)
	} else {
		held.cancel(now) // a repeat (or a failure) is no new intent
	}
	if err != nil {
		return outbox.Intent{}, intentError(err)
	}
	return in, nil
}

// handleCreateIntent: POST /api/rooms/:room/intents {"payload": {...}}
// answers 202 only once the intent is durably in the outbox. A visitor has
// one open intent per room: a repeat returns the same intent_id.
func handleCreateIntent(rooms cachedRooms, deg degradeFlag, ids identities, g intentGuard, store intentStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		var body struct {
			Payload json.RawMessage `json:"payload"`
			Pow     string          `json:"pow"` // a solved challenge, for a new visitor
		}
		if err := decodeBody(c, &body, false); err != nil {
			return err
		}
		if len(body.Payload) == 0 || string(body.Payload) == "null" {
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "payload", Message: "payload: is required"}
		}
		in, err := acceptIntent(c, rooms, deg, ids, g, store, room, body.Payload, body.Pow)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, newIntentJSON(in))
	}
}

// handleGetIntent: GET /api/intents/:id, for its own visitor only.
func handleGetIntent(rooms cachedRooms, ids identities, store intentStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		in, err := ownIntent(c, rooms, ids, store, c.Param("id"))
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, newIntentJSON(in))
	}
}

// validIntentID accepts the outbox's UUIDs without a store round trip for junk.
func validIntentID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return false
		}
	}
	return true
}

func ownIntent(c echo.Context, rooms cachedRooms, ids identities, store intentStore, id string) (outbox.Intent, error) {
	if !validIntentID(id) {
		return outbox.Intent{}, intentError(outbox.ErrNotFound)
	}
	in, err := store.Get(c.Request().Context(), id)
	if err != nil {
		return outbox.Intent{}, intentError(err)
	}
	s, _ := rooms.CachedSettings(in.Room)
	visitor, err := ids.forRead(c, s)
	if err != nil || visitor == "" || visitor != in.Visitor {
		return outbox.Intent{}, intentError(outbox.ErrNotFound)
	}
	return in, nil
}
