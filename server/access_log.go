package server

import (
	"context"
	"log/slog"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/queue"
)

// requestIDHeader carries a request's id, in and out.
const requestIDHeader = "X-Request-Id"

// quietPaths are probes and scrapes: logged at debug level, or every
// health check would drown the requests that matter.
var quietPaths = map[string]bool{"/livez": true, "/healthz": true, "/readyz": true, "/metrics": true}

// accessLog writes one line per request: its id (also the response's
// X-Request-Id), method, path (never the query: push URLs carry the embed
// key), status, duration and the client address (c.RealIP(), so through
// --trusted-proxies only). An incoming X-Request-Id is kept only from a
// trusted proxy and only when well-formed: anyone else could forge lines
// that look like another request's, or smuggle junk into the log. A nil
// log writes nothing (tests).
func accessLog(log *slog.Logger, trusted []netip.Prefix) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if log == nil {
			return next
		}
		return func(c echo.Context) error {
			start := time.Now()
			req := c.Request()
			id := req.Header.Get(requestIDHeader)
			if !validRequestID(id) || !clientip.TrustedPeer(trusted, req.RemoteAddr) {
				id = queue.RandomID()
			}
			c.Response().Header().Set(requestIDHeader, id)
			err := next(c)
			if err != nil {
				c.Error(err) // write the error now, so its status is logged
			}
			level := slog.LevelInfo
			if quietPaths[req.URL.Path] {
				level = slog.LevelDebug
			}
			log.LogAttrs(context.Background(), level, "request",
				slog.String("request_id", id),
				slog.String("method", req.Method),
				slog.String("path", req.URL.Path),
				slog.Int("status", c.Response().Status),
				slog.Int64("bytes", c.Response().Size),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("client", c.RealIP()),
			)
			return nil
		}
	}
}

// validRequestID: 1 to 64 characters of letters, digits, '-', '_' and '.'.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
