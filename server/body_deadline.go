package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"
)

// errBodyTimeout answers a request whose body did not arrive in time.
var errBodyTimeout = errorf(http.StatusRequestTimeout, "body_timeout", "the request body did not arrive in time")

// bodyDeadline gives every request but the push streams a read deadline of
// d from when its headers were read, so a body sent a byte at a time, or
// declared and never sent, cannot hold a connection and its goroutine.
// http.Server.ReadTimeout cannot do this: it would cut the push streams
// too (net/http cancels a request once a read of its connection fails).
// net/http clears the deadline before the connection's next request. It
// bounds the whole request too: once the deadline passes, net/http's
// background read of the connection fails and cancels the request's
// context, which no API call comes near. d <= 0 turns it off.
func bodyDeadline(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if d <= 0 {
			return next
		}
		return func(c echo.Context) error {
			if streamRoute(c) {
				return next(c)
			}
			rc := http.NewResponseController(c.Response())
			if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
				return err // only a writer that hides the connection; none in this server
			}
			c.Request().Body = deadlineBody{c.Request().Body}
			return next(c)
		}
	}
}

// deadlineBody turns the deadline's error into the 408 answer.
type deadlineBody struct{ io.ReadCloser }

func (b deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, errBodyTimeout
	}
	return n, err
}
