package server

import (
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
)

// Refusals of a push connection over a cap. The page falls back to polling.
var (
	errPushPerTicket = errorf(http.StatusServiceUnavailable, "too_many_connections", "this ticket has as many push connections as it may; poll the ticket instead")
	errPushPerIP     = errorf(http.StatusServiceUnavailable, "too_many_connections", "this address has as many push connections as it may; poll the ticket instead")
)

// streamRoute reports whether the route is a long-lived stream (WebSocket
// or Server-Sent Events): the visitors' push and the dashboard's live view.
func streamRoute(c echo.Context) bool {
	p := c.Path()
	return strings.HasSuffix(p, "/ws") || strings.HasSuffix(p, "/events")
}

// pushLimits counts open push connections per ticket and per client (IPv6
// per /64). The newest connection over a cap is refused; the ones already
// open keep working. A cap <= 0 is no cap.
type pushLimits struct {
	perTicket, perIP int

	mu      sync.Mutex
	tickets map[string]int // room/ticket -> open connections
	addrs   map[string]int // client bucket -> open connections
}

func newPushLimits(perTicket, perIP int) *pushLimits {
	return &pushLimits{perTicket: perTicket, perIP: perIP, tickets: map[string]int{}, addrs: map[string]int{}}
}

// acquire counts one more connection, or says which cap refuses it.
func (l *pushLimits) acquire(ticket, addr string) *apiError {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perTicket > 0 && l.tickets[ticket] >= l.perTicket {
		return errPushPerTicket
	}
	if l.perIP > 0 && l.addrs[addr] >= l.perIP {
		return errPushPerIP
	}
	l.tickets[ticket]++
	l.addrs[addr]++
	return nil
}

func (l *pushLimits) release(ticket, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tickets[ticket]--; l.tickets[ticket] <= 0 {
		delete(l.tickets, ticket) // the maps hold open connections only
	}
	if l.addrs[addr]--; l.addrs[addr] <= 0 {
		delete(l.addrs, addr)
	}
}

// middleware caps the visitors' push routes (/api/…/ws and …/events) for as
// long as each connection is open, which may be after its handler returned.
func (l *pushLimits) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	if l.perTicket <= 0 && l.perIP <= 0 {
		return next
	}
	return func(c echo.Context) error {
		if !streamRoute(c) || !strings.HasPrefix(c.Path(), "/api/") {
			return next(c)
		}
		ticket := c.Param("room") + "/" + c.Param("ticket")
		addr := clientip.Bucket(c.RealIP())
		if ae := l.acquire(ticket, addr); ae != nil {
			// Answered here rather than through the error handler, which
			// logs every 5xx: refusals are what an attack is made of.
			c.Response().Header().Set("Retry-After", "2")
			return c.JSON(ae.Status, map[string]*apiError{"error": ae})
		}
		// A WebSocket outlives its handler (the hub holds it alone): the
		// hub gives the places back when the connection ends.
		ctx, finish := push.Hold(c.Request().Context(), func(error) { l.release(ticket, addr) })
		c.SetRequest(c.Request().WithContext(ctx))
		defer finish()
		return next(c)
	}
}
