package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/static"
)

// Route is one row of the route table: every path waitroom serves is a row
// of routes or DashboardRoutes below, or mounted with MountHandler, and
// nowhere else. The gate's split (Paths) and the list in docs/api.md are
// derived from it.
type Route struct {
	// Method is an HTTP method, anyMethod, or echo.RouteNotFound (a 404
	// answer that still runs Guards).
	Method  string
	Path    string // echo syntax: ":name" is one segment, a final "*" the rest
	Handler echo.HandlerFunc
	Guards  []echo.MiddlewareFunc
	Purpose string
}

// anyMethod serves every method (echo's Any).
const anyMethod = "ANY"

// routeDeps are what the table's handlers are built from; a nil optional
// part leaves its rows unmounted (Handler nil).
type routeDeps struct {
	cfg   Config
	ids   identities
	deg   degradeFlag
	work  powGate
	fa    echo.HandlerFunc // forward auth; nil without a public URL
	admin echo.MiddlewareFunc
	shop  shopAuth // who may bind tokens to holders
}

// routes is waitroom's own table. Rows whose Handler is nil are declared
// but off in this configuration (no metrics handler, no outbox, …).
func (s *Server) routes(d routeDeps) []Route {
	line, ids, deg, work, hub := s.line, d.ids, d.deg, d.work, s.hub
	eids := ids.embedded()
	admin := []echo.MiddlewareFunc{d.admin}

	var getDegrade, postDegrade echo.HandlerFunc
	var ride []echo.MiddlewareFunc // a visitor's request rides out a short stall (stall.go)
	if d.cfg.Avail != nil {
		ride = []echo.MiddlewareFunc{rideStall(d.cfg.Avail)}
		getDegrade, postDegrade = handleGetDegrade(d.cfg.Avail), handlePostDegrade(d.cfg.Avail, line, d.cfg.Logger)
	}
	var createIntent, getIntent, acceptPage, acceptForm echo.HandlerFunc
	if d.cfg.Intents != nil {
		g := intentGuard{newcomers: d.cfg.Newcomers, limits: newIntentLimits(maxIntentClients), work: work}
		if g.newcomers == nil {
			g.newcomers = workForNewcomers{}
		}
		createIntent, getIntent = handleCreateIntent(line, deg, ids, g, d.cfg.Intents), handleGetIntent(line, ids, d.cfg.Intents)
		a := acceptPageDeps{line: line, deg: deg, ids: ids, guard: g, store: d.cfg.Intents}
		acceptPage, acceptForm = handleAcceptPage(a), handleAcceptForm(a)
	}
	var report echo.HandlerFunc
	if d.cfg.History != nil {
		report = handleRoomReport(line, d.cfg.History)
	}
	var metrics echo.HandlerFunc
	if d.cfg.Metrics != nil {
		metrics = echo.WrapHandler(d.cfg.Metrics)
	}
	const get, post, del = http.MethodGet, http.MethodPost, http.MethodDelete
	var outboxWritable writable
	if d.cfg.Intents != nil {
		outboxWritable = d.cfg.Intents.Writable
	}
	ready := handleReadyz(pingFunc(d.cfg.Ping), deg, d.cfg.Avail != nil && d.cfg.Intents != nil, outboxWritable)

	return []Route{
		// Operations.
		{get, "/livez", handleLivez, nil, "the process is up"},
		{get, "/healthz", handleLivez, nil, "/livez's older name"},
		{get, "/readyz", ready, nil, "this server can serve visitors"},
		{get, "/metrics", metrics, nil, "Prometheus metrics (guarded by --metrics-token, --metrics-allow)"},
		{get, "/api/openapi.yaml", handleOpenAPI, nil, "this API's OpenAPI 3.1 description"},
		{get, NoCheckoutPath, NoCheckoutPage, nil, "where a room's default target_url leads until its operator sets one"},

		// Visitors: the line.
		{post, "/api/rooms/:room/enter", handleEnter(line, ids, deg, work, s.waiters), ride, "take a place in the line"},
		{get, "/api/rooms/:room/challenge", handleChallenge(line, ids, work), ride, "a proof-of-work challenge"},
		{get, "/api/rooms/:room/tickets/:ticket", handleStatus(line, ids, deg, s.waiters), ride, "a ticket's state"},
		{del, "/api/rooms/:room/tickets/:ticket", handleLeave(line, ids, deg, s.waiters), ride, "leave the line"},
		{get, "/api/rooms/:room/tickets/:ticket/ws", handlePush(line, ids, deg, hub, s.waiters, false), ride, "a ticket's updates over WebSocket"},
		{get, "/api/rooms/:room/tickets/:ticket/events", handlePush(line, ids, deg, hub, s.waiters, true), ride, "a ticket's updates over SSE"},
		{get, "/rooms/:room", handleRoomPage(line, ids, deg, work, s.waiters), ride, "the waiting page"},

		// Visitors in degraded mode (with an outbox).
		{post, "/api/rooms/:room/intents", createIntent, nil, "leave an intent while Redis is down"},
		{get, "/api/intents/:id", getIntent, nil, "an intent's state"},
		{get, "/api/rooms/:room/mode", ready, nil, "/readyz's answer where proxies route the API: the accept page's way back to the line"},
		{get, "/rooms/:room/accept", acceptPage, nil, "the degraded mode's accept page"},
		{post, "/rooms/:room/accept", acceptForm, nil, "the accept page's form"},

		// The embed: the ticket API again with the embed's identities (user
		// token, embed key, partitioned cookie), its page and its SDK.
		{get, "/embed/rooms/:room", handleEmbedPage(line, deg), ride, "the waiting page inside a shop's iframe"},
		{post, "/api/rooms/:room/embed/enter", handleEnter(line, eids, deg, work, s.waiters), ride, "enter, from the embed"},
		{get, "/api/rooms/:room/embed/challenge", handleChallenge(line, eids, work), ride, "a challenge, from the embed"},
		{get, "/api/rooms/:room/embed/tickets/:ticket", handleStatus(line, eids, deg, s.waiters), ride, "a ticket's state, from the embed"},
		{del, "/api/rooms/:room/embed/tickets/:ticket", handleLeave(line, eids, deg, s.waiters), ride, "leave, from the embed"},
		{get, "/api/rooms/:room/embed/tickets/:ticket/ws", handlePush(line, eids, deg, hub, s.waiters, false), ride, "updates over WebSocket, from the embed"},
		{get, "/api/rooms/:room/embed/tickets/:ticket/events", handlePush(line, eids, deg, hub, s.waiters, true), ride, "updates over SSE, from the embed"},
		{get, embedSDKPath, handleEmbedSDK(), nil, "the embed SDK at its stable URL"},

		// Checkout.
		{get, "/.well-known/jwks.json", handleJWKS(line.Keys()), nil, "the keys entry tokens are signed with"},
		{post, "/api/tokens/verify", handleVerify(line, d.shop), nil, "verify an entry token (binding it to a holder: the shop's key)"},
		{post, "/api/tokens/redeem", handleRedeem(line, d.shop), nil, "redeem a hand-off code for its entry token, server to server"},
		{post, "/api/rooms/:room/complete", handleComplete(line), nil, "end an admission after checkout"},
		{anyMethod, "/api/rooms/:room/forward-auth", d.fa, nil, "nginx auth_request, Traefik ForwardAuth (with --public-url)"},
		{anyMethod, "/api/rooms/:room/forward-auth/*", d.fa, nil, "Envoy ext_authz, which appends the visitor's path"},

		// Admin API (bearer admin token).
		{get, "/admin/api/rooms", handleListRooms(line), admin, "admin API: list rooms"},
		{get, "/admin/api/rooms/:room", handleGetRoom(line), admin, "admin API: a room's settings"},
		{http.MethodPut, "/admin/api/rooms/:room", handlePutRoom(line, d.cfg.Logger), admin, "admin API: create or replace a room"},
		{http.MethodPatch, "/admin/api/rooms/:room", handlePatchRoom(line, d.cfg.Logger), admin, "admin API: change only the named settings (JSON merge patch)"},
		{del, "/admin/api/rooms/:room", handleDeleteRoom(line, d.cfg.Logger), admin, "admin API: delete a room"},
		{get, "/admin/api/rooms/:room/shop-key", handleShopKey(line.Keys()), admin, "admin API: the room's shop key (binds tokens to holders)"},
		{get, "/admin/api/rooms/:room/stats", handleRoomStats(line), admin, "admin API: a room's figures"},
		{get, "/admin/api/rooms/:room/report", report, admin, "admin API: the sale's history minute by minute, and its summary (JSON or CSV)"},
		{post, "/admin/api/rooms/:room/sold-out", handleSoldOut(line, d.cfg.Logger), admin, "admin API: end the sale (sold out) or undo it"},
		{get, "/admin/api/rooms/:room/draw", handleRoomDraw(line), admin, "admin API: the scheduled opening and its draw's record"},
		{post, "/admin/api/rooms/:room/open", handleOpenRoom(line, d.cfg.Logger), admin, "admin API: open now (the opening moves to now)"},
		{get, "/admin/api/degrade", getDegrade, admin, "admin API: degraded mode and its drill"},
		{post, "/admin/api/degrade", postDegrade, admin, "admin API: start or end the drill"},
		{echo.RouteNotFound, "/admin/api", notFound, admin, "admin API: unknown paths, the token checked before the 404"},
		{echo.RouteNotFound, "/admin/api/*", notFound, admin, "admin API: unknown paths, the token checked before the 404"},

		// Assets.
		{get, static.Prefix + "*", echo.WrapHandler(static.Handler()), nil, "built JS and CSS, by content hash"},

		// Everything else. The gate's split leaves this row out (Paths).
		{echo.RouteNotFound, "/*", notFound, nil, "404 not_found"},
	}
}

func notFound(echo.Context) error {
	return errorf(http.StatusNotFound, "not_found", "no such endpoint")
}

// DashboardRoutes are the dashboard's rows (internal/operator/dashboard), beside the
// admin API under /admin.
func DashboardRoutes(h dashboard.Handlers) []Route {
	const get, post = http.MethodGet, http.MethodPost
	page, api, form := []echo.MiddlewareFunc{h.Page}, []echo.MiddlewareFunc{h.API}, []echo.MiddlewareFunc{h.Form}
	return []Route{
		{get, "/admin/login", h.LoginPage, nil, "dashboard: sign-in page"},
		{post, "/admin/login", h.Login, nil, "dashboard: sign in with the admin token"},
		{post, "/admin/logout", h.Logout, form, "dashboard: sign out"},
		{get, "/admin", h.Rooms, page, "dashboard: the rooms"},
		{get, "/admin/", h.Rooms, page, "dashboard: the rooms"},
		{get, "/admin/live", h.Overview, api, "dashboard: the rooms' figures"},
		{get, "/admin/live/ws", h.LiveWS, api, "dashboard: the rooms' figures over WebSocket"},
		{get, "/admin/live/events", h.LiveSSE, api, "dashboard: the rooms' figures over SSE"},
		{get, "/admin/create", h.CreatePage, page, "dashboard: the new room form"},
		{post, "/admin/create", h.Create, form, "dashboard: create a room"},
		{post, "/admin/validate", h.Validate, form, "dashboard: check the room form"},
		{get, "/admin/rooms/:room", h.Room, page, "dashboard: a room"},
		{get, "/admin/rooms/:room/live", h.RoomLive, api, "dashboard: a room's figures"},
		{get, "/admin/rooms/:room/live/ws", h.LiveWS, api, "dashboard: a room's figures over WebSocket"},
		{get, "/admin/rooms/:room/live/events", h.LiveSSE, api, "dashboard: a room's figures over SSE"},
		{get, "/admin/rooms/:room/edit", h.EditPage, page, "dashboard: the room form"},
		{post, "/admin/rooms/:room/edit", h.Edit, form, "dashboard: change a room"},
		{get, "/admin/rooms/:room/delete", h.DeletePage, page, "dashboard: confirm a deletion"},
		{post, "/admin/rooms/:room/delete", h.Delete, form, "dashboard: delete a room"},
		{post, "/admin/rooms/:room/controls", h.Controls, form, "dashboard: pause, pace, capacity"},
		{post, "/admin/rooms/:room/open", h.OpenNow, form, "dashboard: open now (a scheduled opening)"},
		{get, "/admin/rooms/:room/report", h.Report, page, "dashboard: the printable sale report (format=csv|json: its minutes)"},
		{post, "/admin/degrade", h.Degrade, form, "dashboard: the degraded-mode drill"},
	}
}

// MountDashboard serves the dashboard's rows.
func (s *Server) MountDashboard(h dashboard.Handlers) { s.mount(DashboardRoutes(h)) }

// MountHandler serves h at method and path as a row of the table, for a
// program that serves something of its own beside waitroom (cmd/waitroom's
// demo shop, examples/shop.Paths).
func (s *Server) MountHandler(h http.Handler, method, path, purpose string) {
	s.mount([]Route{{Method: method, Path: path, Handler: echo.WrapHandler(h), Purpose: purpose}})
}

// Mount serves rows on e, skipping those that are off (Handler nil). Tests
// that lay out a router of their own use it.
func Mount(e *echo.Echo, rows []Route) {
	for _, r := range rows {
		switch {
		case r.Handler == nil:
		case r.Method == anyMethod:
			e.Any(r.Path, r.Handler, r.Guards...)
		case r.Method == echo.RouteNotFound:
			e.RouteNotFound(r.Path, r.Handler, r.Guards...)
		default:
			e.Add(r.Method, r.Path, r.Handler, r.Guards...)
		}
	}
}

func (s *Server) mount(rows []Route) {
	Mount(s.e, rows)
	s.table = append(s.table, rows...)
}

// Paths are the patterns (gate's syntax) of every path this server
// serves, for gate.Split to keep for waitroom: everything mounted but the
// catch-all 404, which would leave nothing to the upstream.
func (s *Server) Paths() []string {
	var out []string
	for _, r := range s.table {
		if r.Handler == nil || r.Path == "/*" {
			continue
		}
		if p := gatePattern(r.Path); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// gatePattern turns an echo path into a gate pattern: a ":name" segment
// becomes "*" (one segment); a final "/*" already means "and below".
func gatePattern(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}
