package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

const room = "shop"

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// upstream is the checkout behind the gate: it records what reached it.
type upstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Clone(context.Background()))
		u.mu.Unlock()
		if r.Header.Get("X-Test-Fail") != "" {
			w.WriteHeader(http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "upstream "+r.Method+" "+r.URL.RequestURI())
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.seen...)
}

func (u *upstream) last(t *testing.T) *http.Request {
	t.Helper()
	rs := u.requests()
	if len(rs) == 0 {
		t.Fatal("the upstream saw no request")
	}
	return rs[len(rs)-1]
}

// fixture is waitroom and its gate on one origin, as Split wires them, over
// a line on the shared real Redis with a fake clock and a fixed jitter
// (half of jitter_ms, 500 ms by default).
type fixture struct {
	t     *testing.T
	line  *queue.Line
	clock *clockwork.FakeClock
	keys  *token.Keyset
	url   string // the one origin, also waitroom's public URL
	up    *upstream
	meter *gate.Meter
	busy  sync.WaitGroup // requests the origin is still serving
}

func newFixture(t *testing.T, edit func(*queue.Settings)) *fixture {
	t.Helper()
	return newFixtureWith(t, redistest.Shared(t).Client(t), edit)
}

func newFixtureWith(t *testing.T, rdb redis.UniversalClient, edit func(*queue.Settings)) *fixture {
	t.Helper()
	return newFixtureProxy(t, rdb, edit, nil)
}

// newFixtureProxy is newFixtureWith, with proxyEdit changing the gate's config.
func newFixtureProxy(t *testing.T, rdb redis.UniversalClient, edit func(*queue.Settings), proxyEdit func(*gate.ProxyConfig)) *fixture {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(t0)
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys,
		queue.LineOptions{Clock: clock, Jitter: func(max time.Duration) time.Duration { return max / 2 }})
	f := &fixture{t: t, line: line, clock: clock, keys: keys, up: newUpstream(t), meter: gate.NewMeter(gate.MeterOptions{Clock: clock})}

	ts := httptest.NewUnstartedServer(nil)
	f.url = "http://" + ts.Listener.Addr().String()
	keys.Issuer = f.url
	s := queue.DefaultSettings()
	s.TargetURL = "/checkout/"
	s.BatchSize = 100
	s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
	if edit != nil {
		edit(&s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := line.PutRoom(context.Background(), room, s); err != nil && !errors.Is(err, queue.ErrUnavailable) {
		t.Fatal(err) // a test of a dead Redis has no room to put
	}
	pc := gate.ProxyConfig{
		Upstream: mustURL(t, f.up.srv.URL), Protect: []string{"/checkout/*", "/api/orders"},
		Complete: []string{"/api/orders"}, Room: room, Line: line, PublicURL: f.url, Meter: f.meter,
	}
	if proxyEdit != nil {
		proxyEdit(&pc)
	}
	proxy, err := gate.NewProxy(pc)
	if err != nil {
		t.Fatal(err)
	}
	wr := server.New(line, server.Config{AdminToken: "test-admin-token-0123456789"})
	h, err := gate.Split(wr, proxy, wr.Paths())
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.busy.Add(1)
		defer f.busy.Done()
		h.ServeHTTP(w, r)
	})
	ts.Start()
	t.Cleanup(ts.Close)
	return f
}

// settle waits until the origin has finished every request, including
// work after the answer (handing a slot back on a completing path).
func (f *fixture) settle() { f.busy.Wait() }

// client does not follow redirects, so tests see them; jar may be nil.
func client(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return client(jar)
}

type result struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

// do sends a request; hdr are "Name: value" pairs.
func (f *fixture) do(c *http.Client, method, target string, hdr ...string) result {
	f.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = f.url + target
	}
	req, err := http.NewRequest(method, target, nil)
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
			f.t.Fatalf("%s %s: body %q: %v", method, target, b, err)
		}
	}
	return out
}

// vid is the visitor cookie of the tests' admitted visitor; owner is the
// header that sends it, so the token's owner presents it.
const (
	vid   = "0123456789abcdef0123456789abcdef"
	owner = "Cookie: wr_vid=" + vid
)

// admit enters the visitor whose waitroom cookie is visitor straight on the
// line (the fast track of an empty line) and returns its ticket and entry
// token, whose turn starts 500 ms on.
func (f *fixture) admit(visitor string) (queue.Ticket, string) {
	f.t.Helper()
	tk, _, err := f.line.Enter(context.Background(), room, queue.VisitorIdentity(visitor))
	if err != nil {
		f.t.Fatal(err)
	}
	if tk.State != vocab.StateAdmitted {
		f.t.Fatalf("visitor %s: state %s, want admitted", visitor, tk.State)
	}
	tok, err := f.line.Token(tk)
	if err != nil {
		f.t.Fatal(err)
	}
	return tk, tok
}

// sign makes an entry token with the fixture's keys, or others.
func (f *fixture) sign(keys *token.Keyset, c token.EntryClaims) string {
	f.t.Helper()
	if c.Issuer == "" {
		c.Issuer = f.url
	}
	tok, err := keys.Sign(c)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

func (f *fixture) pause(paused bool) {
	f.t.Helper()
	s, err := f.line.Settings(context.Background(), room)
	if err != nil {
		f.t.Fatal(err)
	}
	s.Paused = paused
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

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// runAdmitter runs the line's admission loop until the test ends and
// returns what tells the tickets it admitted so far, in admission order.
func runAdmitter(t *testing.T, line *queue.Line) (admitted func() []string) {
	t.Helper()
	var mu sync.Mutex
	var ids []string
	adm := queue.NewAdmitter(line)
	adm.OnTick = func(_ string, _ queue.Settings, r queue.TickResult) {
		mu.Lock()
		ids = append(ids, r.Admitted...)
		mu.Unlock()
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- adm.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("admitter: %v", err)
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ids...)
	}
}
