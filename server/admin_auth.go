package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
)

var (
	errUnauthorized = errorf(http.StatusUnauthorized, "unauthorized", "missing or wrong admin token")
	errRateLimited  = errorf(http.StatusTooManyRequests, "rate_limited", "too many wrong admin tokens from your network; retry after Retry-After seconds")
)

// failureCounter counts wrong admin tokens per client network
// (*throttle.Failures, shared with the dashboard's sign-in).
type failureCounter interface {
	Failed(ctx context.Context, client string) (time.Duration, bool)
}

// requireAdmin lets through requests bearing the admin token. The token is
// looked at first, so the right one is never refused for failures, however
// many and from wherever (a flood must not lock the operator out in the
// middle of a sale); only wrong ones are counted, per client network, and
// a network past its allowance is answered 429. Guessing stays hopeless
// because the token carries 128 bits or more (checked at start), not
// because of the count.
func requireAdmin(adminToken string, fails failureCounter, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if adminops.RightToken(adminToken, bearer(c)) {
				return next(c)
			}
			wait, ok := fails.Failed(c.Request().Context(), clientip.Bucket(c.RealIP()))
			if !ok {
				// Not logged: a locked-out network's flood would fill the
				// log; the access log has each 429, this log its first ones.
				c.Response().Header().Set("Retry-After", throttle.RetryAfter(wait))
				return errRateLimited
			}
			log.Warn("admin api: wrong admin token", "remote", c.RealIP(), "method", c.Request().Method, "path", c.Request().URL.Path)
			return errUnauthorized
		}
	}
}
