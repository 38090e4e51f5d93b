package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/clientip"
	"github.com/waitroom/waitroom/queue"
)

// clientLimiter holds a client to its room's per-client limits
// (bot_protection.enters_per_ip_per_minute, places_per_ip), counted in Redis
// across every server; *queue.Line is one.
type clientLimiter interface {
	LimitClient(ctx context.Context, room string, s *queue.Settings, bucket, identity string) error
}

// limitEnter is the enter paths' check (API, waiting page, embed): the
// client is c.RealIP() (X-Forwarded-For only from --trusted-proxies), counted
// by its bucket (an IPv6 client by its /64).
func limitEnter(c echo.Context, lim clientLimiter, room string, s queue.Settings, identity string) error {
	return lim.LimitClient(c.Request().Context(), room, &s, clientip.Bucket(c.RealIP()), identity)
}

// limitError is a per-client limit's refusal as the client sees it: 429,
// Retry-After, and a message that names the limit.
func limitError(le *queue.LimitError) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Code: le.Code(), Message: le.Explain(),
		RetryAfter: max(le.RetryAfter, time.Second)}
}
