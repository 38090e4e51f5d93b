package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// enterer is what the enter handler needs of the line.
type enterer interface {
	roomReader
	cachedRooms
	tokenSigner
	clientLimiter
	EnterWith(ctx context.Context, room, identity string, proof queue.EntryProof) (queue.Ticket, queue.Settings, error)
	Now() time.Time
}

// handleEnter: POST /api/rooms/:room/enter {"user_token"?, "pow"?}
func handleEnter(line enterer, ids identities, deg degradeFlag, g powGate) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		var body struct {
			UserToken string `json:"user_token"`
			Pow       string `json:"pow"` // a solved challenge: see docs/api.md
		}
		if err := decodeBody(c, &body, true); err != nil {
			return err
		}
		v, err := enter(c, line, ids, deg, g, room, body.UserToken, body.Pow)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// enter takes a place (or returns the visitor's own) for the API and the
// embed; with proof of work on, a new place costs a solution (powPayload).
func enter(c echo.Context, line enterer, ids identities, deg degradeFlag, g powGate, room, userToken, powPayload string) (ticketJSON, error) {
	if deg.Degraded() {
		return bypassed(line, room, "")
	}
	ctx := c.Request().Context()
	s, err := line.Room(ctx, room)
	if err != nil {
		return ticketJSON{}, err
	}
	identity, err := ids.forEnter(c, s, userToken)
	if err != nil {
		return ticketJSON{}, err
	}
	if err := limitEnter(c, line, room, s, identity); err != nil {
		return ticketJSON{}, err
	}
	t, s, err := g.Enter(ctx, line, s, room, identity, powPayload)
	if err != nil {
		return ticketJSON{}, err
	}
	return newTicketJSON(line, t, &s)
}

func roomParam(c echo.Context) (string, error) {
	room := c.Param("room")
	if !queue.ValidRoomID(room) {
		return "", errRoomNotFound
	}
	return room, nil
}
