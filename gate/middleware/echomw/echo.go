// Package echomw is waitroom's gate middleware (gate/middleware) for
// an echo server. It lives apart so that a net/http shop importing the
// middleware does not compile echo in.
package echomw

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/gate/middleware"
)

// Middleware is the gate for an echo server, e.g. e.Group("/checkout", mw).
// A handler's error is rendered by echo's error handler inside the gate, so
// the gate sees the real status (a failed order must not hand the slot
// back) and the meter its real latency.
func Middleware(cfg middleware.Config) (echo.MiddlewareFunc, error) {
	gate, err := middleware.New(cfg)
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
			gate(h).ServeHTTP(c.Response(), c.Request())
			return nil
		}
	}, nil
}
