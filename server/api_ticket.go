package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/queue"
)

// statusReader is what the status handler needs of the line.
type statusReader interface {
	roomReader
	cachedRooms
	ticketViewer
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
		if v := visitorID(c); v != "" && !ids.embed && ids.vids != nil && !ids.heldPlace(c, t.Room, v) {
			ids.markPlace(c, t.Room, t.Identity) // a place from before the marks, or one whose mark expired
		}
		v, err := line.View(t, &s)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, v)
	}
}

// ownTicket reads the ticket named in the path for the asking visitor.
func ownTicket(c echo.Context, line statusReader, ids identities) (queue.Ticket, queue.Settings, error) {
	room, id, identity, err := ticketOwner(c, line, ids)
	if err != nil {
		return queue.Ticket{}, queue.Settings{}, err
	}
	return line.Status(c.Request().Context(), room, id, identity)
}

// ticketOwner resolves the room and ticket named in the path and who is
// asking: what every read or change of one's own ticket checks first. A
// visitor without an identity, or a malformed id, has no such ticket.
func ticketOwner(c echo.Context, rooms roomReader, ids identities) (room, id, identity string, err error) {
	room, err = roomParam(c)
	if err != nil {
		return "", "", "", err
	}
	s, err := rooms.Settings(c.Request().Context(), room)
	if err != nil {
		return "", "", "", err
	}
	identity, err = ids.forRead(c, s)
	if err != nil {
		return "", "", "", err
	}
	id = c.Param("ticket")
	if identity == "" || !hexid.Valid(id) {
		return "", "", "", errTicketNotFound
	}
	return room, id, identity, nil
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
		room, id, identity, err := ticketOwner(c, line, ids)
		if err != nil {
			return err
		}
		if err := line.Leave(c.Request().Context(), room, id, identity); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
