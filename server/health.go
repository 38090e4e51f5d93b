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

// handleHealthz: GET /healthz, the process is up.
func handleHealthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz: GET /readyz, Redis answers.
func handleReadyz(p pinger) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), time.Second)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			c.Response().Header().Set("Retry-After", "2")
			return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "redis": err.Error()})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
}
