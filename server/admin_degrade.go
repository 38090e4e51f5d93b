package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// drills is what the degrade handlers need: this server's flag, and the
// store that carries a drill to every server.
type drills interface {
	State() queue.AvailabilityState
	Force(on *bool)
}

type drillStore interface {
	SetDrill(ctx context.Context, on *bool) error
}

// handleGetDegrade: GET /admin/api/degrade shows the state and why.
func handleGetDegrade(a drills) echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, a.State())
	}
}

// handlePostDegrade: POST /admin/api/degrade {"on": true|false|null} starts
// or ends a drill: true forces degraded mode, false forces normal mode, null
// returns to automatic. It applies here at once and reaches the other
// servers through Redis when Redis answers.
func handlePostDegrade(a drills, store drillStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			On *bool `json:"on"`
		}
		if err := decodeBody(c, &body, false); err != nil {
			return err
		}
		a.Force(body.On)
		st := a.State()
		shared := store.SetDrill(c.Request().Context(), body.On) == nil
		return c.JSON(http.StatusOK, struct {
			queue.AvailabilityState
			AllServers bool `json:"all_servers"`
		}{st, shared})
	}
}
