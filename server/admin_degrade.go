package server

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
)

// handleGetDegrade: GET /admin/api/degrade shows the state and why.
func handleGetDegrade(a adminops.Flag) echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, a.State())
	}
}

// handlePostDegrade: POST /admin/api/degrade {"on": true|false|null} starts
// or ends a drill: true forces degraded mode; false and null both return to
// automatic (normal mode is never forced: it would hide a real outage). It
// applies here at once and reaches the other servers through Redis when
// Redis answers.
func handlePostDegrade(a adminops.Flag, store adminops.DrillStore, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			On *bool `json:"on"`
		}
		if err := decodeBody(c, &body, false); err != nil {
			return err
		}
		st := adminops.SetDrill(c.Request().Context(), a, store, body.On)
		adminops.Log(log, c, adminops.ByAdminToken, adminops.DrillChange(body.On, st))
		return c.JSON(http.StatusOK, st)
	}
}
