package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// stallSlack is what a request waits beyond --degrade-after for the switch:
// the probe's interval and timeout, by which a stall that lasts is noticed.
const stallSlack = time.Second

// stallWatch is what rideStall needs of the availability flag.
type stallWatch interface {
	Degraded() bool
	Settled() <-chan struct{}
	DegradeAfter() time.Duration
}

// rideStall makes a stall that ends within --degrade-after cost a visitor
// no error: a request whose store call failed (a timeout: Redis paused, or
// every connection waiting on it) waits until Redis answers again or this
// server switches to degraded mode, up to --degrade-after and the probe's
// slack, and then runs again: on the line, or bypassed as in any outage.
// Only the visitors' requests, whose handlers are safe to run twice (enter
// returns the live ticket; status, leave and pages read), and only before
// anything was written to the client.
func rideStall(w stallWatch) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			var body []byte
			if req.Body != nil && req.Body != http.NoBody {
				b, err := io.ReadAll(req.Body) // at most 64 KiB: the body limit
				if err != nil {
					return err
				}
				body = b
			}
			run := func() error {
				if body != nil {
					req.Body = io.NopCloser(bytes.NewReader(body))
				}
				return next(c)
			}
			err := run()
			if !stalled(err) || c.Response().Committed {
				return err
			}
			t := time.NewTimer(w.DegradeAfter() + stallSlack)
			defer t.Stop()
			ranDegraded := false
			for stalled(err) && !c.Response().Committed {
				if w.Degraded() {
					// Switched (by this very failure, maybe): once more, on
					// the degraded path.
					if ranDegraded {
						return err
					}
					ranDegraded = true
				} else {
					select {
					case <-w.Settled():
					case <-t.C:
						return err
					case <-req.Context().Done():
						return err
					}
				}
				err = run()
			}
			return err
		}
	}
}

// stalled: the store did not answer in time, or this server's connections
// to it were all waiting.
func stalled(err error) bool {
	return err != nil && (errors.Is(err, queue.ErrUnavailable) || errors.Is(err, queue.ErrBusy))
}
