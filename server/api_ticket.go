package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/hexid"
	"github.com/waitroom/waitroom/queue"
)

// statusReader is what the status handler needs of the line.
type statusReader interface {
	roomReader
	cachedRooms
	tokenSigner
	Status(ctx context.Context, room, ticketID, identity string) (queue.Ticket, queue.Settings, error)
}

// handleStatus: GET /api/rooms/:room/tickets/:ticket. A status read is the
// waiter's sign of life; someone else's ticket is a 404.
func handleStatus(line statusReader, ids identities, deg degradeFlag) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		if deg.Degraded() {
			room, err := roomParam(c)
			if err != nil {
				return err
			}
			v, err := bypassed(line, room, c.Param("ticket"))
			if err != nil {
				return err
			}
			return c.JSON(http.StatusOK, v)
		}
		t, s, err := ownTicket(c, line, ids)
		if err != nil {
			return err
		}
		v, err := newTicketJSON(line, t, &s)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// ownTicket reads the ticket named in the path for the asking visitor.
func ownTicket(c echo.Context, line statusReader, ids identities) (queue.Ticket, queue.Settings, error) {
	room, err := roomParam(c)
	if err != nil {
		return queue.Ticket{}, queue.Settings{}, err
	}
	ctx := c.Request().Context()
	s, err := line.Room(ctx, room)
	if err != nil {
		return queue.Ticket{}, queue.Settings{}, err
	}
	identity, err := ids.forRead(c, s)
	if err != nil {
		return queue.Ticket{}, queue.Settings{}, err
	}
	id := c.Param("ticket")
	if identity == "" || !hexid.Valid(id) {
		return queue.Ticket{}, queue.Settings{}, errTicketNotFound
	}
	return line.Status(ctx, room, id, identity)
}

// leaver is what the leave handler needs of the line.
type leaver interface {
	roomReader
	Leave(ctx context.Context, room, ticketID, identity string) error
}

// handleLeave: DELETE /api/rooms/:room/tickets/:ticket
func handleLeave(line leaver, ids identities, deg degradeFlag) echo.HandlerFunc {
	return func(c echo.Context) error {
		if deg.Degraded() {
			return errUnavailable // the line is in Redis; try again when it answers
		}
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		s, err := line.Room(ctx, room)
		if err != nil {
			return err
		}
		identity, err := ids.forRead(c, s)
		if err != nil {
			return err
		}
		id := c.Param("ticket")
		if identity == "" || !hexid.Valid(id) {
			return errTicketNotFound
		}
		if err := line.Leave(ctx, room, id, identity); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
