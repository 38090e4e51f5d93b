package middleware_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/gate/middleware"
	"github.com/waitroom/waitroom/gate/middleware/echomw"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

const room = "shop"

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixture is waitroom on its own origin and a shop on another that uses
// the middleware, through net/http or echo. Both run on one fake clock;
// waitroom's jitter is fixed at half of jitter_ms (500 ms).
type fixture struct {
	t      *testing.T
	line   *queue.Line
	clock  *clockwork.FakeClock
	keys   *token.Keyset
	wr     string // waitroom's URL, also its public URL and the tokens' iss
	shop   string
	meter  *middleware.Meter
	busy   sync.WaitGroup // requests the shop is still serving
	mu     sync.Mutex
	seen   []*http.Request // what reached the shop's handlers
	wrSeen []string        // paths waitroom was asked for
}

func newFixture(t *testing.T, kind string, edit func(*queue.Settings), cfgEdit func(*middleware.Config)) *fixture {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(t0)
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys,
		queue.LineOptions{Clock: clock, Jitter: func(max time.Duration) time.Duration { return max / 2 }})
	f := &fixture{t: t, line: line, clock: clock, keys: keys, meter: middleware.NewMeter(middleware.MeterOptions{Clock: clock})}

	s := queue.DefaultSettings()
	s.BatchSize = 100
	// Proof of work off, as the tests are not about it; pow_test.go turns
	// it on.
	s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
	if edit != nil {
		edit(&s)
	}
	if err := line.PutRoom(context.Background(), room, s); err != nil {
		t.Fatal(err)
	}
	wr := server.New(line, server.Config{AdminToken: "test-admin-token-0123456789"})
	wrSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.wrSeen = append(f.wrSeen, r.URL.Path)
		f.mu.Unlock()
		wr.ServeHTTP(w, r)
	}))
	f.wr = "http://" + wrSrv.Listener.Addr().String()
	keys.Issuer = f.wr
	wrSrv.Start()
	t.Cleanup(wrSrv.Close)

	cfg := middleware.Config{
		WaitroomURL: f.wr, Room: room, Credential: keys.ShopKey(room),
		Protect: []string{"/checkout/*", "/api/orders"}, Complete: []string{"/api/orders"},
		Meter: f.meter, Now: clock.Now, Context: t.Context(),
	}
	if cfgEdit != nil {
		cfgEdit(&cfg)
	}
	var h http.Handler
	switch kind {
	case "net/http":
		mw, err := middleware.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h = mw(http.HandlerFunc(f.serve))
	case "echo":
		mw, err := echomw.Middleware(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e := echo.New()
		e.Use(mw)
		e.Any("/*", func(c echo.Context) error {
			if c.Request().Header.Get("X-Test-Fail") != "" {
				f.record(c.Request())
				return echo.NewHTTPError(http.StatusConflict, "sold out") // rendered by echo, inside the gate
			}
			f.serve(c.Response(), c.Request())
			return nil
		})
		h = e
	default:
		t.Fatalf("kind %q", kind)
	}
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.busy.Add(1)
		defer f.busy.Done()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(shop.Close)
	f.shop = shop.URL
	return f
}

func (f *fixture) record(r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Clone(context.Background()))
	f.mu.Unlock()
}

// serve is the shop's own checkout.
func (f *fixture) serve(w http.ResponseWriter, r *http.Request) {
	f.record(r)
	if r.Header.Get("X-Test-Fail") != "" {
		w.WriteHeader(http.StatusConflict)
		return
	}
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = io.WriteString(w, "shop "+r.Method+" "+r.URL.RequestURI())
}

func (f *fixture) shopSaw() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.seen...)
}

// waitroomAPICalls counts calls to waitroom other than for its keys.
func (f *fixture) waitroomAPICalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.wrSeen {
		if p != "/.well-known/jwks.json" {
			n++
		}
	}
	return n
}

func client(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func jarClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return client(jar)
}

type result struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

func (f *fixture) do(c *http.Client, method, path string, hdr ...string) result {
	f.t.Helper()
	req, err := http.NewRequest(method, f.shop+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := result{status: res.StatusCode, header: res.Header, body: string(b)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &out.json); err != nil {
			f.t.Fatalf("%s %s: body %q: %v", method, path, b, err)
		}
	}
	return out
}

// vid is the shop-side visitor cookie (the middleware's own wr_vid) of the
// tests' admitted visitor, as if the middleware had entered the line for
// it; owner is the header that sends it.
const (
	vid   = "0123456789abcdef0123456789abcdef"
	owner = "Cookie: wr_vid=" + vid
)

// admit enters the visitor whose cookie is visitor, as the middleware does
// for an API client, and returns its ticket and entry token.
func (f *fixture) admit(visitor string) (queue.Ticket, string) {
	f.t.Helper()
	tk, _, err := f.line.Enter(context.Background(), room, queue.VisitorIdentity(visitor))
	if err != nil || tk.State != vocab.StateAdmitted {
		f.t.Fatalf("enter %s: %v %v", visitor, tk.State, err)
	}
	tok, err := f.line.Token(tk)
	if err != nil {
		f.t.Fatal(err)
	}
	return tk, tok
}

func (f *fixture) pause() {
	f.t.Helper()
	s, err := f.line.Settings(context.Background(), room)
	if err != nil {
		f.t.Fatal(err)
	}
	s.Paused = true
	if err := f.line.PutRoom(context.Background(), room, s); err != nil {
		f.t.Fatal(err)
	}
}

func cookie(res result, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: res.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// both runs a test against the net/http middleware and the echo adapter.
func both(t *testing.T, test func(t *testing.T, kind string)) {
	for _, kind := range []string{"net/http", "echo"} {
		t.Run(kind, func(t *testing.T) { test(t, kind) })
	}
}

func newServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
