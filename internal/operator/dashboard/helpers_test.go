package dashboard_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
	"github.com/waitroom/waitroom/static"
)

const adminToken = "dashboard-test-admin-token-0123456789"

// wait bounds every blocking step; it is a failure timeout, never a way to
// synchronise.
const wait = 10 * time.Second

// site is the dashboard on a real Redis, its rows of the route table
// (server.DashboardRoutes) mounted on a router laid out as server.New lays
// out its own: the bearer-token admin API group at /admin/api with its
// middleware, the built assets and a catch-all 404. The rest of the server
// is left out so these tests do not break with its work in progress.
type site struct {
	t     *testing.T
	url   string
	line  *queue.Line
	avail *queue.Availability
	dash  *dashboard.Dashboard
	hist  *history.Store // with siteOptions.history
}

type siteOptions struct {
	deps  func(*dashboard.Deps) // adjusts the deps before New
	admit bool                  // run the admission loops
	rdb   redis.UniversalClient // the Redis to use; nil is the shared one
	// history keeps the sale's history (site.hist) on the site's Redis.
	history bool
}

func newSite(t *testing.T, o siteOptions) *site {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var rdb redis.UniversalClient = redistest.Shared(t).Client(t)
	if o.rdb != nil {
		rdb = o.rdb
	}
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil) // 127.0.0.1
	base := "http://" + ts.Listener.Addr().String()
	keys.Issuer = base
	prefix := redistest.Prefix(t)
	store := redisstore.New(rdb, prefix)
	line := queue.NewLine(store, keys, queue.LineOptions{Logger: logger})
	avail := queue.NewAvailability(nil, logger)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// As behind --trusted-proxies 127.0.0.1: a test names its client in
	// X-Forwarded-For (without it, the client is the loopback peer).
	e.IPExtractor = clientip.Extractor([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	e.Use(middleware.Recover())
	api := e.Group("/admin/api", func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().Header.Get("Authorization") != "Bearer "+adminToken {
				return c.JSON(http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
			}
			return next(c)
		}
	})
	api.GET("/rooms", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"api": "rooms"}) })
	e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler())) // as server.New serves the built assets
	e.RouteNotFound("/*", func(c echo.Context) error {
		return c.JSON(http.StatusNotFound, map[string]string{"error": "not_found"})
	})
	deps := dashboard.Deps{
		Line: line, AdminToken: adminToken, Logger: logger, Avail: avail,
		SampleEvery: 200 * time.Millisecond, RateWindow: 2 * time.Second, PushEvery: 200 * time.Millisecond,
	}
	var hist *history.Store
	if o.history {
		hist = history.New(rdb, prefix, 0, logger)
		deps.History = hist
	}
	if o.deps != nil {
		o.deps(&deps)
	}
	dash := dashboard.New(deps)
	server.Mount(e, server.DashboardRoutes(dash.Handlers()))
	ts.Config.Handler = e
	ts.Start()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	run := func(name string, fn func(context.Context) error) {
		wg.Go(func() {
			if err := fn(ctx); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	run("dashboard", dash.Run)
	if o.admit {
		run("admitter", queue.NewAdmitter(line).Run)
	}
	t.Cleanup(func() {
		cancel()
		dash.Close() // live streams first: they would hold ts.Close
		wg.Wait()
		ts.Close()
	})
	return &site{t: t, url: base, line: line, avail: avail, dash: dash, hist: hist}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// putRoom stores a room directly.
func (s *site) putRoom(room string, st queue.Settings) {
	s.t.Helper()
	if err := s.line.PutRoom(context.Background(), room, st); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) getRoom(room string) queue.Settings {
	s.t.Helper()
	st, err := s.line.StoredSettings(context.Background(), room)
	if err != nil {
		s.t.Fatalf("get room %s: %v", room, err)
	}
	return st
}

// browser is an HTTP client with a cookie jar that does not follow redirects.
type browser struct {
	t    *testing.T
	site *site
	c    *http.Client
	csrf string // from the last page that had one
}

func (s *site) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return &browser{t: s.t, site: s, c: &http.Client{
		Jar:           jar,
		Timeout:       wait,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type page struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	p := page{status: res.StatusCode, header: res.Header, body: string(body)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		p.doc, err = goquery.NewDocumentFromReader(strings.NewReader(p.body))
		if err != nil {
			b.t.Fatal(err)
		}
		if tok, ok := p.doc.Find(`meta[name="csrf-token"]`).Attr("content"); ok {
			b.csrf = tok
		}
	}
	return p
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.site.url+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	return b.do(req)
}

// post sends a form; headers are added as given.
func (b *browser) post(path string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.site.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(req)
}

// postForm posts with the session's CSRF token as the form field.
func (b *browser) postForm(path string, form url.Values) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf_token", b.csrf)
	return b.post(path, form)
}

// signIn loads the sign-in form and posts the admin token; it leaves the
// browser on the rooms page with its CSRF token.
func (b *browser) signIn() {
	b.t.Helper()
	p := b.get("/admin/login")
	tok := attr(b.t, p, `input[name="csrf_token"]`, "value")
	p = b.post("/admin/login", url.Values{"csrf_token": {tok}, "token": {adminToken}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin" {
		b.t.Fatalf("sign in: %d to %q", p.status, p.header.Get("Location"))
	}
	if p := b.get("/admin"); p.status != http.StatusOK || b.csrf == "" {
		b.t.Fatalf("rooms page after sign-in: %d, csrf %q", p.status, b.csrf)
	}
}

func attr(t *testing.T, p page, sel, name string) string {
	t.Helper()
	if p.doc == nil {
		t.Fatalf("not a page (%d): %.300s", p.status, p.body)
	}
	v, ok := p.doc.Find(sel).First().Attr(name)
	if !ok {
		t.Fatalf("no %s[%s] in the page (%d)", sel, name, p.status)
	}
	return v
}

// byTestID is the text of the one element with data-testid=id, whitespace collapsed.
func byTestID(t *testing.T, p page, id string) string {
	t.Helper()
	if p.doc == nil {
		t.Fatalf("not a page (%d): %.300s", p.status, p.body)
	}
	s := p.doc.Find(`[data-testid="` + id + `"]`)
	if s.Length() != 1 {
		t.Fatalf("want one [data-testid=%q], found %d (status %d)", id, s.Length(), p.status)
	}
	return strings.Join(strings.Fields(s.Text()), " ")
}

// shown reports whether the element with data-testid=id is there and not hidden.
func shown(p page, id string) bool {
	s := p.doc.Find(`[data-testid="` + id + `"]`)
	_, hidden := s.Attr("hidden")
	return s.Length() == 1 && !hidden
}
