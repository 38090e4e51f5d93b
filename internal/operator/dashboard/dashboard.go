// Package dashboard is the admin dashboard at /admin: sign-in with the admin
// token, rooms to list, create, edit and delete, each room's live figures
// and charts pushed over the push package's WebSocket/SSE machinery, and the
// controls an operator needs during a sale. The JSON admin API under
// /admin/api stays where it is, bearer-token based.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/labstack/echo/v4"
	"golang.org/x/sync/errgroup"

	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/push"
	"github.com/waitroom/waitroom/queue"
)

// Deps is what the dashboard is built from. Line and AdminToken are
// required; a nil optional part shows as "n/a" and its control is hidden.
type Deps struct {
	Line       Line
	AdminToken string
	// Secure marks cookies Secure: the public URL is https.
	Secure bool
	Logger *slog.Logger

	Avail      Availability     // degraded mode and its drill
	Outbox     OutboxCounter    // the degraded path's intents
	Activation ActivationReader // adaptive rooms' line state
	Waits      WaitStats        // p50/p95 of time waited
	History    History          // the sale's minutes, shared by every server; nil: none

	Clock       clockwork.Clock // default real
	SampleEvery time.Duration   // how often rooms are sampled (default 2s)
	RateWindow  time.Duration   // per-second rates are averaged over this (default 10s)
	PushEvery   time.Duration   // least time between two pushes to a dashboard (default 1s)
	SessionTTL  time.Duration   // how long a sign-in lasts (default 12h)

	// Failures throttles wrong admin tokens at sign-in, shared with the
	// admin API and across servers; nil counts on this server only.
	Failures FailureCounter
	// Revocations records sign-outs for every server; nil keeps a sign-out
	// on the server that handled it.
	Revocations Revocations
}

// Dashboard serves /admin.
type Dashboard struct {
	d        Deps
	log      *slog.Logger
	sessions *sessions
	sampler  *sampler
	hub      *push.Hub
}

// New builds the dashboard; mount its Handlers (server.MountDashboard) and run it with Run.
func New(deps Deps) *Dashboard {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Clock == nil {
		deps.Clock = clockwork.NewRealClock()
	}
	if deps.SampleEvery <= 0 {
		deps.SampleEvery = 2 * time.Second
	}
	if deps.RateWindow <= 0 {
		deps.RateWindow = 10 * time.Second
	}
	if deps.PushEvery <= 0 {
		deps.PushEvery = time.Second
	}
	if deps.SessionTTL <= 0 {
		deps.SessionTTL = 12 * time.Hour
	}
	if deps.Failures == nil {
		deps.Failures = throttle.New(nil, "admin", throttle.Options{Logger: deps.Logger})
	}
	d := &Dashboard{d: deps, log: deps.Logger}
	d.sessions = newSessions(deps.AdminToken, deps.SessionTTL, deps.Clock.Now, deps.Revocations)
	d.sampler = newSampler(samplerConfig{
		src: deps.Line, outbox: deps.Outbox, clock: deps.Clock, log: deps.Logger,
		every: deps.SampleEvery, keep: chartSpan, window: deps.RateWindow, hist: deps.History,
	})
	if deps.Avail != nil {
		d.sampler.degraded = func() bool { return deps.Avail.State().Degraded }
	}
	// A second hub, apart from the waiting pages': its "tickets" are room
	// ids (and overviewKey), and what it pushes is the dashboard JSON.
	d.hub = push.NewHub(liveFetcher{d}, push.Options{
		Clock: deps.Clock, Logger: deps.Logger,
		// Never silent for long: the fetch is what carries new samples.
		MaxSilence: deps.PushEvery,
	})
	d.sampler.after = d.hub.NotifyAll
	return d
}

// chartSpan is how far back the charts reach.
const chartSpan = 15 * time.Minute

// Run samples the rooms and pushes to open dashboards until ctx ends. It
// also hears settings changes made on any server, so open dashboards show
// them at once.
func (d *Dashboard) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.sampler.run(ctx) })
	g.Go(func() error { d.sessions.resendUnsent(ctx, d.d.Clock); return nil })
	g.Go(func() error {
		if err := d.hub.Run(ctx); err != nil {
			return fmt.Errorf("dashboard: push: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		err := d.d.Line.Listen(ctx, func(string, []queue.Admitted) {}, func(room string) { d.changed(ctx, room) })
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("dashboard: listen: %w", err)
		}
		return nil
	})
	return g.Wait()
}

// Close ends every live connection (WebSocket 1001) so http.Server.Shutdown
// is not held up by them; call it with the server's own Close.
func (d *Dashboard) Close() { d.hub.Close() }

// changed takes in a room's new settings (or its deletion) and pushes its
// page and the overview at once.
func (d *Dashboard) changed(ctx context.Context, room string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d.sampler.refresh(ctx, room)
	d.hub.NotifyRoom(room)
	d.hub.NotifyRoom(overviewKey)
}

// Handlers are the dashboard's endpoints and the guards they sit behind,
// for the one route table (server/routes.go) to mount under /admin.
type Handlers struct {
	// Page needs a session and sends a browser without one to sign in; API
	// answers 401 instead; Form is API plus the form's CSRF token. They are
	// per route, not on a group: a group's catch-all would shadow the admin
	// API's own not-found answers.
	Page, API, Form echo.MiddlewareFunc

	LoginPage, Login, Logout              echo.HandlerFunc
	Rooms, Overview, LiveWS, LiveSSE      echo.HandlerFunc
	CreatePage, Create, Validate          echo.HandlerFunc
	Room, RoomLive, EditPage, Edit        echo.HandlerFunc
	DeletePage, Delete, Controls, Degrade echo.HandlerFunc
	OpenNow, Report                       echo.HandlerFunc
}

// Handlers builds the dashboard's endpoints.
func (d *Dashboard) Handlers() Handlers {
	store := d.d.Line
	return Handlers{
		Page: d.requireSession, API: d.requireSessionAPI,
		Form: func(h echo.HandlerFunc) echo.HandlerFunc { return d.requireSessionAPI(d.requireCSRF(h)) },

		LoginPage: d.handleLoginPage, Login: d.handleLogin, Logout: d.handleLogout,
		Rooms: d.handleRooms, Overview: d.handleOverviewJSON, LiveWS: d.handleLive(false), LiveSSE: d.handleLive(true),
		CreatePage: d.handleCreatePage, Create: handleCreate(d, store, d.d.Line), Validate: handleValidate(d, store),
		Room: d.handleRoomPage, RoomLive: d.handleRoomJSON,
		EditPage: handleEditPage(d, store), Edit: handleEdit(d, store, d.d.Line),
		DeletePage: handleDeletePage(d, store), Delete: handleDelete(d, store, d.d.Line),
		Controls: handleControls(d, store, d.d.Line), Degrade: handleDegrade(d, d.d.Avail, store),
		OpenNow: handleOpenNow(d, d.d.Line), Report: d.handleReport,
	}
}
