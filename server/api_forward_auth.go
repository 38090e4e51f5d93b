package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/queue"
)

// forwardAuther is the gate a proxy asks before it forwards; *gate.ForwardAuth.
type forwardAuther interface {
	Check(w http.ResponseWriter, r *http.Request, room string, orig gate.Original, refuse string) error
}

// roomGetter tells whether a room exists.
type roomGetter interface {
	Settings(ctx context.Context, room string) (queue.Settings, error)
}

// handleForwardAuth: any method on /api/rooms/{room}/forward-auth[/path],
// the subrequest of nginx auth_request, Traefik ForwardAuth, Envoy
// ext_authz or HAProxy. 200 lets the visitor's request through; anything
// else is the visitor's answer (?refuse=401: as nginx needs it).
func handleForwardAuth(rooms roomGetter, fa forwardAuther) echo.HandlerFunc {
	return func(c echo.Context) error {
		room := c.Param("room")
		if !queue.ValidRoomID(room) {
			return errRoomNotFound
		}
		refuse := c.QueryParam("refuse")
		if refuse != gate.RefuseAsIs && refuse != gate.Refuse401 {
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "refuse", Message: "refuse: want 401 or nothing"}
		}
		// A room that does not exist is a misconfigured proxy, not a
		// visitor to send to a waiting page that would say the same.
		// When Redis is down the gate decides (offline verification).
		if _, err := rooms.Settings(c.Request().Context(), room); errors.Is(err, queue.ErrRoomNotFound) {
			return errRoomNotFound
		}
		orig := gate.OriginalOf(c.Request().Header, c.Param("*"))
		orig.Client = c.RealIP() // the proxy's X-Forwarded-For, when --trusted-proxies trusts it
		if err := fa.Check(c.Response(), c.Request(), room, orig, refuse); err != nil {
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Message: err.Error()}
		}
		return nil
	}
}
