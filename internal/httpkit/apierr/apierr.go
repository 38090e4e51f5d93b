// Package apierr maps the line's errors (queue's values) to what an HTTP
// client sees, once for the API and the dashboard.
package apierr

import (
	"errors"
	"net/http"

	"github.com/waitroom/waitroom/queue"
)

// Answer is an error's status and the body's {"code", "message", "field"}.
type Answer struct {
	Status  int
	Code    string
	Message string
	Field   string
}

// The answers to the line's errors.
var (
	RoomNotFound   = Answer{Status: http.StatusNotFound, Code: "room_not_found", Message: "no such room"}
	TicketNotFound = Answer{Status: http.StatusNotFound, Code: "ticket_not_found", Message: "no such ticket for this visitor"}
	NotScheduled   = Answer{Status: http.StatusConflict, Code: "not_scheduled", Message: "the room has no opening ahead: nothing to open"}
	Unavailable    = Answer{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the waiting room cannot reach its store; retry shortly"}
	Busy           = Answer{Status: http.StatusServiceUnavailable, Code: "busy", Message: "this server is overloaded; retry shortly"}
)

// Core answers an error of the line: a bad field, a room or ticket not
// found, the store unavailable. ok is false for any other error.
func Core(err error) (a Answer, ok bool) {
	var fe *queue.FieldError
	switch {
	case errors.As(err, &fe):
		return Answer{Status: http.StatusBadRequest, Code: "invalid", Message: fe.Error(), Field: fe.Field}, true
	case errors.Is(err, queue.ErrRoomNotFound):
		return RoomNotFound, true
	case errors.Is(err, queue.ErrTicketNotFound):
		return TicketNotFound, true
	case errors.Is(err, queue.ErrUnavailable):
		return Unavailable, true
	case errors.Is(err, queue.ErrBusy):
		return Busy, true
	case errors.Is(err, queue.ErrNotScheduled):
		return NotScheduled, true
	}
	return Answer{}, false
}
