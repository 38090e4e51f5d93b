// Package server is waitroom's HTTP side: the JSON API, pages and push.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/queue"
)

// Config is what the server needs beyond the line.
type Config struct {
	AdminToken string
	// Secure marks cookies Secure: the public URL is https.
	Secure bool
	Logger *slog.Logger
	// Ping checks that Redis answers, for /readyz.
	Ping func(ctx context.Context) error
	// Avail is the availability flag; nil means never degraded.
	Avail *queue.Availability
	// Intents is the durable outbox of degraded mode; nil disables intents.
	Intents intentStore
	// Metrics serves /metrics (already guarded); nil leaves it out.
	Metrics http.Handler
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (c.RealIP()); none by default.
	TrustedProxies []netip.Prefix
	// Newcomers decides whether a request without an identity may leave an
	// intent while degraded (intent_guard.go); nil lets them in only to pay
	// the proof of work, and refuses them in rooms without it.
	Newcomers NewcomerCheck
	// Limits bound what one client can hold open; zero values are no limit
	// (cmd/waitroom's flags give the production defaults).
	Limits Limits
	// AdminFailures counts wrong admin tokens, shared with the dashboard's
	// sign-in and across servers (throttle.New on Redis); nil counts on
	// this server only.
	AdminFailures failureCounter
	// Challenges limits proof-of-work challenges asked for and solutions
	// sent per client network (throttle.New(rdb, "challenge", …).Take,
	// across servers); nil: no limit.
	Challenges challengeCounter
	// NetworkIPv4Bits is the IPv4 prefix a client network is counted by,
	// for a place's price and the challenge limit (0 or 32: one address;
	// 24: a /24). IPv6 is always counted by its /64.
	NetworkIPv4Bits int
	// PresentEvery is how often the waiters' sign of life is written
	// (queue.WaitersOptions); 0 is queue.DefaultPresentEvery. Tests shorten it.
	PresentEvery time.Duration
	// AccessLog, when set, gets one line per request (server/access_log.go).
	AccessLog *slog.Logger
	// History is the sale's minutes (*history.Store) for the report
	// export; nil leaves the report off.
	History reportSource
	// Figures counts challenges and intents into the sale's history
	// (*history.Store); nil: not counted.
	Figures figureCounter
}

// Server routes requests to handlers.
type Server struct {
	e    *echo.Echo
	line *queue.Line
	hub  *push.Hub
	// waiters answer waiting tickets' reads and updates from the change
	// log and write their sign of life (queue.Waiters).
	waiters *queue.Waiters
	log     *slog.Logger
	// pageError renders an error as a page for browser routes (renderError,
	// set by New); errors.go answers JSON when it is nil or fails.
	pageError func(c echo.Context, status int, message string) error
	// table is every route declared (routes.go), mounted or off.
	table []Route
}

type pingFunc func(ctx context.Context) error

func (f pingFunc) Ping(ctx context.Context) error { return f(ctx) }

// New builds the server and mounts its route table (routes.go).
func New(line *queue.Line, cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Ping == nil {
		cfg.Ping = func(context.Context) error { return nil }
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = clientip.Extractor(cfg.TrustedProxies)
	var deg degradeFlag = never{}
	if cfg.Avail != nil {
		deg = cfg.Avail
	}
	waiters := queue.NewWaiters(line, queue.WaitersOptions{Logger: cfg.Logger, PresentEvery: cfg.PresentEvery})
	s := &Server{e: e, line: line, log: cfg.Logger, waiters: waiters,
		hub: push.NewHub(pushFetcher{line: line, deg: deg, waiters: waiters}, push.Options{Logger: cfg.Logger})}
	if cfg.Avail != nil {
		// Open pages and sockets switch to (or back from) the accept page by themselves.
		cfg.Avail.OnChange(func(bool) { s.hub.NotifyAll() })
	}
	e.HTTPErrorHandler = s.errorHandler
	e.Use(accessLog(cfg.AccessLog, cfg.TrustedProxies))
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit("64K"))
	e.Use(bodyDeadline(cfg.Limits.BodyTimeout))
	e.Use(newPushLimits(cfg.Limits.PushPerTicket, cfg.Limits.PushPerIP).middleware)
	e.Use(securityHeaders)

	ids := identities{secure: cfg.Secure, now: line.Now, vids: line.Keys()}
	work := newPowGate(line)
	work.limit, work.v4Bits, work.figures = cfg.Challenges, cfg.NetworkIPv4Bits, cfg.Figures

	var fa echo.HandlerFunc
	if f, err := gate.NewForwardAuth(gate.ForwardAuthConfig{Line: line, PublicURL: line.Keys().Issuer, Logger: cfg.Logger,
		Challenges: cfg.Challenges, NetworkIPv4Bits: cfg.NetworkIPv4Bits}); err == nil {
		fa = handleForwardAuth(line, f)
	} else if line.Keys().Issuer != "" {
		cfg.Logger.Warn("no forward auth", "err", err)
	}
	if cfg.AdminFailures == nil {
		cfg.AdminFailures = throttle.New(nil, "admin", throttle.Options{Logger: cfg.Logger})
	}
	s.pageError = renderError
	s.mount(s.routes(routeDeps{cfg: cfg, ids: ids, deg: deg, work: work, fa: fa,
		admin: requireAdmin(cfg.AdminToken, cfg.AdminFailures, cfg.Logger),
		shop:  shopAuth{keys: line.Keys(), adminToken: cfg.AdminToken}}))
	return s
}

// securityHeaders: no page may be framed by another site (the embed route
// sets its own frame-ancestors), and browsers must not sniff types.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "frame-ancestors 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}

// Run pushes updates to open pages until ctx ends: the hub's tier loop, fed
// by admissions and settings changes announced through Redis by any server.
func (s *Server) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.hub.Run(ctx) })
	// An admission goes store → waiters (the view) → hub → socket.
	g.Go(func() error {
		return s.waiters.Run(ctx, queue.WaitersHooks{Open: s.hub.Open, Admitted: s.hub.Notify, RoomChanged: s.hub.NotifyRoom})
	})
	return g.Wait()
}

// Close ends every push connection cleanly so clients reconnect elsewhere;
// http.Server.Shutdown does not close hijacked WebSocket connections.
func (s *Server) Close() { s.hub.Close() }

// PushStats reports the push hub's connections and messages, for metrics.
func (s *Server) PushStats() push.Stats { return s.hub.Stats() }

// ServeHTTP makes the server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.e.ServeHTTP(w, r) }

// HTTPServer returns an http.Server for addr with timeouts that suit short
// API calls; push streams set their own per-write deadlines.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       DefaultIdleTimeout,
	}
}
