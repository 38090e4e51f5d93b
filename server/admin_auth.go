package server

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/clientip"
	"github.com/waitroom/waitroom/internal/throttle"
)

var (
	errUnauthorized = errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong admin token")
	errRateLimited  = errorf(http.StatusTooManyRequests, "rate_limited", "too many wrong admin tokens; retry after Retry-After seconds")
)

// failureCounter counts wrong admin tokens per client and overall
// (*throttle.Failures, shared with the dashboard's sign-in).
type failureCounter interface {
	Attempt(ctx context.Context, client string) (time.Duration, bool)
	Succeeded(ctx context.Context, client string)
}

// requireAdmin lets through requests bearing the admin token. Each attempt
// is counted before the token is looked at, and taken back when it was
// right: a client (or everyone together) that sent too many wrong ones is
// answered 429 without a look at its token, so guessing, even many at
// once, gains nothing.
func requireAdmin(adminToken string, fails failureCounter, log *slog.Logger) echo.MiddlewareFunc {
	want := []byte(adminToken)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx := c.Request().Context()
			client := clientip.Bucket(c.RealIP())
			if wait, ok := fails.Attempt(ctx, client); !ok {
				c.Response().Header().Set("Retry-After", throttle.RetryAfter(wait))
				return errRateLimited
			}
			got := []byte(bearer(c))
			if len(want) == 0 || subtle.ConstantTimeCompare(got, want) != 1 {
				log.Warn("admin api: wrong admin token", "remote", c.RealIP(), "method", c.Request().Method, "path", c.Request().URL.Path)
				return errUnauthorized
			}
			fails.Succeeded(ctx, client)
			return next(c)
		}
	}
}
