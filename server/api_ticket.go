package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/queue"
)

// statusReader is what the status handler needs of the line besides its waiters.
type statusReader interface {
	roomReader
	cachedRooms
	ticketViewer
}

// handleStatus: GET /api/rooms/:room/tickets/:ticket. A status read is the
// waiter's sign of life; someone else's ticket is a 404. A waiting ticket
// is answered by the line's waiters from this server's view of the line
// (queue.Waiters.Status), stale rather than an error while the store is busy.
func handleStatus(line statusReader, ids identities, deg degradeFlag, waiters *queue.Waiters) echo.HandlerFunc {
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
		room, id, identity, err := ticketOwner(c, line, ids)
		if err != nil {
			return err
		}
		t, s, err := waiters.Status(c.Request().Context(), room, id, identity)
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

// handleLeave: DELETE /api/rooms/:room/tickets/:ticket. The line's waiters
// drop the ticket, so a poll right after says it left.
func handleLeave(line roomReader, ids identities, deg degradeFlag, waiters *queue.Waiters) echo.HandlerFunc {
	return func(c echo.Context) error {
		if deg.Degraded() {
			return errUnavailable // the line is in Redis; try again when it answers
		}
		room, id, identity, err := ticketOwner(c, line, ids)
		if err != nil {
			return err
		}
		if err := waiters.Leave(c.Request().Context(), room, id, identity); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
