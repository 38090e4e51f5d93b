package apierr_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/waitroom/waitroom/internal/httpkit/apierr"
	"github.com/waitroom/waitroom/queue"
)

func TestCoreErrorsMapOnce(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		code   string
		field  string
	}{
		{fmt.Errorf("redisstore: enter: %w: %w", queue.ErrUnavailable, errors.New("dial tcp: connection refused")), http.StatusServiceUnavailable, "unavailable", ""},
		{fmt.Errorf("redisstore: status: %w: %w", queue.ErrBusy, errors.New("redis: connection pool timeout")), http.StatusServiceUnavailable, "busy", ""},
		{fmt.Errorf("x: %w", queue.ErrRoomNotFound), http.StatusNotFound, "room_not_found", ""},
		{queue.ErrTicketNotFound, http.StatusNotFound, "ticket_not_found", ""},
		{queue.ErrNotScheduled, http.StatusConflict, "not_scheduled", ""},
		{&queue.FieldError{Field: "capacity", Message: "must be at least 1"}, http.StatusBadRequest, "invalid", "capacity"},
	} {
		a, ok := apierr.Core(c.err)
		if !ok || a.Status != c.status || a.Code != c.code || a.Field != c.field || a.Message == "" {
			t.Errorf("%v: %+v %v", c.err, a, ok)
		}
	}
	// A Redis error the adapter did not call an outage is no error of the line.
	if a, ok := apierr.Core(errors.New("ERR script error")); ok {
		t.Errorf("foreign error mapped: %+v", a)
	}
}
