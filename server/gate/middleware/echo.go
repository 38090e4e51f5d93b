package middleware

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// EchoMiddleware is the middleware for an echo server, e.g.
// e.Group("/checkout", mw). A handler's error is rendered by echo's error
// handler inside the gate, so the gate sees the real status (a failed
// order must not hand the slot back) and the meter its real latency.
func EchoMiddleware(cfg Config) (echo.MiddlewareFunc, error) {
	g, meter, err := build(cfg)
	if err != nil {
		return nil, err
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.SetRequest(r)
				c.SetResponse(echo.NewResponse(w, c.Echo()))
				if err := next(c); err != nil {
					c.Error(err)
				}
			})
			g.Handler(meter.Handler(h), h).ServeHTTP(c.Response(), c.Request())
			return nil
		}
	}, nil
}
