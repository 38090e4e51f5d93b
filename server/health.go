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
	// Outbox is "ok", or why the outbox cannot write (its disk is full,
	// read-only or failing); absent without an outbox.
	Outbox string `json:"outbox,omitempty"`
}

// writable is what readiness needs of the outbox: can it write.
type writable func(ctx context.Context) error

// handleReadyz: GET /readyz, this server can serve visitors: Redis answers
// (normal mode), or degraded mode carries them (intents through the
// outbox). A readiness probe that failed while degraded would take every
// server out of service exactly when degraded mode is meant to carry the
// sale. canDegrade is false when this server has no degraded path.
//
// An outbox that cannot write makes the server unready in either mode, for
// as long as it lasts: a balancer then sends visitors to a server whose
// disk takes their intents. outbox is nil without an outbox.
func handleReadyz(p pinger, deg degradeFlag, canDegrade bool, outbox writable) echo.HandlerFunc {
	return func(c echo.Context) error {
		outboxState := ""
		if outbox != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), time.Second)
			outboxState = "ok"
			if err := outbox(ctx); err != nil {
				outboxState = err.Error()
			}
			cancel()
		}
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
		mode := "normal"
		if canDegrade && deg.Degraded() {
			mode = "degraded"
		}
		if (mode == "degraded" || redisState == "ok") && (outboxState == "" || outboxState == "ok") {
			return c.JSON(http.StatusOK, readyJSON{Status: "ready", Mode: mode, Redis: redisState, Outbox: outboxState})
		}
		c.Response().Header().Set("Retry-After", "2")
		return c.JSON(http.StatusServiceUnavailable, readyJSON{Status: "unavailable", Mode: mode, Redis: redisState, Outbox: outboxState})
	}
}
