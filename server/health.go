package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// pinger is what readiness needs: can the store be reached.
type pinger interface {
	Ping(ctx context.Context) error
}

// handleLivez: GET /livez (and /healthz, its older name), the process is up.
func handleLivez(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyJSON is /readyz's answer: mode says which path serves visitors.
type readyJSON struct {
	Status string `json:"status"` // ready or unavailable
	Mode   string `json:"mode"`   // normal or degraded
	Redis  string `json:"redis"`  // ok, or why not
}

// handleReadyz: GET /readyz, this server can serve visitors: Redis answers
// (normal mode), or degraded mode carries them (intents through the
// outbox). A readiness probe that failed while degraded would take every
// server out of service exactly when degraded mode is meant to carry the
// sale. canDegrade is false when this server has no degraded path.
func handleReadyz(p pinger, deg degradeFlag, canDegrade bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		redisState := "ok"
		if !deg.Degraded() || !canDegrade {
			ctx, cancel := context.WithTimeout(c.Request().Context(), time.Second)
			defer cancel()
			if err := p.Ping(ctx); err != nil {
				redisState = err.Error()
			}
		} else {
			redisState = "not asked: degraded"
		}
		switch {
		case canDegrade && deg.Degraded():
			return c.JSON(http.StatusOK, readyJSON{Status: "ready", Mode: "degraded", Redis: redisState})
		case redisState == "ok":
			return c.JSON(http.StatusOK, readyJSON{Status: "ready", Mode: "normal", Redis: redisState})
		}
		c.Response().Header().Set("Retry-After", "2")
		return c.JSON(http.StatusServiceUnavailable, readyJSON{Status: "unavailable", Mode: "normal", Redis: redisState})
	}
}
