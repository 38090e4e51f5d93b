package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/apierr"
	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/queue"
)

// apiError is what every JSON error body says: {"error": {"code", "message"}}.
type apiError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// RetryAfter, when set, goes out as the Retry-After header.
	RetryAfter time.Duration `json:"-"`
	// challenge, when set, goes beside the error: a place needs the work.
	challenge *pow.Challenge
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, message string) *apiError {
	return &apiError{Status: status, Code: code, Message: message}
}

// fromAnswer is an answer of apierr (the line's errors) as an apiError.
func fromAnswer(a apierr.Answer) *apiError {
	return &apiError{Status: a.Status, Code: a.Code, Message: a.Message, Field: a.Field}
}

var (
	errRoomNotFound   = fromAnswer(apierr.RoomNotFound)
	errTicketNotFound = fromAnswer(apierr.TicketNotFound)
	errUnavailable    = fromAnswer(apierr.Unavailable)
)

// toAPIError maps any error to the status and code the client should see.
func toAPIError(err error) *apiError {
	var ae *apiError
	var he *echo.HTTPError
	var le *queue.LimitError
	var pr *pow.Refusal
	core, isCore := apierr.Core(err)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &pr):
		return powError(pr)
	case errors.As(err, &le):
		return limitError(le)
	case isCore:
		return fromAnswer(core)
	case errors.As(err, &he):
		msg, _ := he.Message.(string)
		if msg == "" {
			msg = http.StatusText(he.Code)
		}
		code := strings.ToLower(strings.ReplaceAll(http.StatusText(he.Code), " ", "_"))
		if he.Code == http.StatusRequestEntityTooLarge {
			msg = "request body is larger than 64 KiB"
		}
		return &apiError{Status: he.Code, Code: code, Message: strings.ToLower(msg[:1]) + msg[1:]}
	}
	return &apiError{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

// errorHandler answers every failed request with the JSON error shape (or,
// for pages, the page renderer's choice), never a stack trace.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := toAPIError(err)
	// An empty challenge pool is what a flood of asks looks like: not logged per request.
	if ae.Status >= 500 && !errors.Is(err, context.Canceled) {
		s.log.Warn("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "status", ae.Status, "err", err)
	}
	switch {
	case ae.RetryAfter > 0:
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((ae.RetryAfter+time.Second-1)/time.Second), 10))
	case ae.Status == http.StatusServiceUnavailable:
		c.Response().Header().Set("Retry-After", "2")
	}
	if ae.Status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="waitroom"`)
	}
	if s.pageError != nil && wantsPage(c) {
		if perr := s.pageError(c, ae.Status, ae.Message); perr == nil {
			return
		}
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(ae.Status)
		return
	}
	var body any = map[string]*apiError{"error": ae}
	if ae.challenge != nil {
		c.Response().Header().Set("Cache-Control", "no-store")
		body = struct {
			Error     *apiError      `json:"error"`
			Challenge *pow.Challenge `json:"challenge"`
		}{ae, ae.challenge}
	}
	if werr := c.JSON(ae.Status, body); werr != nil {
		s.log.Debug("write error response", "err", werr)
	}
}

// wantsPage reports whether a failed request was a browser's, for a page
// rather than the API.
func wantsPage(c echo.Context) bool {
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/admin/api/") || strings.HasPrefix(p, "/.well-known/") {
		return false
	}
	return strings.HasPrefix(p, "/rooms/") || strings.Contains(c.Request().Header.Get("Accept"), "text/html")
}
