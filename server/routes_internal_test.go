package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

type noIntents struct{}

func (noIntents) Accept(context.Context, string, string, json.RawMessage) (outbox.Intent, bool, error) {
	return outbox.Intent{}, false, errors.New("no intents in this test")
}
func (noIntents) Get(context.Context, string) (outbox.Intent, error) {
	return outbox.Intent{}, errors.New("no intents in this test")
}
func (noIntents) Find(context.Context, string, string) (outbox.Intent, bool, error) {
	return outbox.Intent{}, false, nil
}
func (noIntents) Writable(context.Context) error { return nil }

// fullServer has every optional row on: metrics, degraded mode with an
// outbox, forward auth (a public URL), the dashboard and the demo shop.
func fullServer(t testing.TB) *Server {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = "http://127.0.0.1:8080"
	rdb, prefix := redistest.Shared(t).Client(t), redistest.Prefix(t)
	line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{})
	hist := history.New(rdb, prefix, 0, nil)
	s := New(line, Config{AdminToken: "test-admin-token-0123456789",
		Avail: queue.NewAvailability(nil, nil), Intents: noIntents{}, Metrics: http.NotFoundHandler(), History: hist, Figures: hist})
	s.MountDashboard(dashboard.New(dashboard.Deps{Line: line, AdminToken: "test-admin-token-0123456789"}).Handlers())
	for _, p := range shop.Paths {
		s.MountHandler(http.NotFoundHandler(), p.Method, p.Path, p.Purpose)
	}
	return s
}

// sample is a concrete path that echo's route path matches.
func sample(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "x1"
		}
		if s == "*" {
			segs[i] = "a/b"
		}
	}
	return strings.Join(segs, "/")
}

func isCatchAll(r *echo.Route) bool { return r.Method == echo.RouteNotFound && r.Path == "/*" }

// TestEveryServedPathStaysWithWaitroomBehindTheGate walks what echo really
// serves: every route comes from the table, and the gate's split sends each
// to waitroom (/metrics included); every pattern the split keeps for
// waitroom serves something, so the upstream loses no path for nothing.
func TestEveryServedPathStaysWithWaitroomBehindTheGate(t *testing.T) {
	t.Parallel()
	s := fullServer(t)
	by := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-By", name) })
	}
	to := func(paths []string, path string) string {
		h, err := gate.Split(by("waitroom"), by("gate"), paths)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w.Header().Get("X-By")
	}
	declared := map[string]bool{}
	for _, r := range s.table {
		if r.Handler == nil {
			t.Errorf("%s %s is off in a server with every part on", r.Method, r.Path)
		}
		declared[r.Method+" "+r.Path] = true
	}
	served := s.e.Routes()
	if len(served) < 50 {
		t.Fatalf("echo serves %d routes; the full server has more", len(served))
	}
	paths := s.Paths()
	for _, r := range served {
		if !declared[r.Method+" "+r.Path] && !declared[anyMethod+" "+r.Path] {
			t.Errorf("%s %s is served but not in the route table", r.Method, r.Path)
		}
		if isCatchAll(r) {
			continue
		}
		if got := to(paths, sample(r.Path)); got != "waitroom" {
			t.Errorf("%s %s (as %s) would go to the %s", r.Method, r.Path, sample(r.Path), got)
		}
	}
	for _, p := range paths {
		if !slices.ContainsFunc(served, func(r *echo.Route) bool { return !isCatchAll(r) && to([]string{p}, sample(r.Path)) == "waitroom" }) {
			t.Errorf("the split keeps %s for waitroom, which serves nothing there", p)
		}
	}
	for _, p := range []string{"/metrics", "/admin", "/admin/api/anything", "/shop", "/static/app.js"} {
		if got := to(paths, p); got != "waitroom" {
			t.Errorf("%s goes to the %s", p, got)
		}
	}
	for _, p := range []string{"/", "/checkout/cart", "/api/orders", "/roomsx", "/metricsx"} {
		if got := to(paths, p); got != "gate" {
			t.Errorf("%s goes to %s, want the gate", p, got)
		}
	}
}

// TestOffRowsAreNeitherServedNorKept: a row whose part is off (no metrics
// handler, no outbox) is not routed, and the upstream keeps its path.
func TestOffRowsAreNeitherServedNorKept(t *testing.T) {
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{})
	s := New(line, Config{AdminToken: "test-admin-token-0123456789"})
	for _, r := range s.e.Routes() {
		if r.Path == "/metrics" || r.Path == "/api/intents/:id" || strings.Contains(r.Path, "forward-auth") {
			t.Errorf("%s %s is served though off", r.Method, r.Path)
		}
	}
	for _, p := range s.Paths() {
		if p == "/metrics" || p == "/api/intents/*" {
			t.Errorf("the split keeps %s, which is off", p)
		}
	}
	if !slices.ContainsFunc(s.table, func(r Route) bool { return r.Path == "/metrics" }) {
		t.Error("an off row is still declared")
	}
}

const (
	docsBegin = "<!-- routes: generated from server/routes.go; WAITROOM_UPDATE_DOCS=1 go test ./server -run TestDocsListEveryRoute rewrites it -->"
	docsEnd   = "<!-- end of routes -->"
)

// routesMarkdown is the table of docs/api.md's "Every path" section.
func routesMarkdown(rows []Route) string {
	param := regexp.MustCompile(`:([a-z]+)`)
	var b strings.Builder
	b.WriteString("| method | path | what |\n|---|---|---|\n")
	for _, r := range rows {
		m := r.Method
		switch m {
		case anyMethod:
			m = "any"
		case echo.RouteNotFound:
			m = "any (404)"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", m, param.ReplaceAllString(r.Path, "{$1}"), r.Purpose)
	}
	return b.String()
}

// TestDocsListEveryRoute fails when docs/api.md's list of paths is not the
// route table's.
func TestDocsListEveryRoute(t *testing.T) {
	const file = "../docs/api.md"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	head, rest, ok1 := strings.Cut(doc, docsBegin+"\n")
	listed, tail, ok2 := strings.Cut(rest, docsEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the generated section between %q and %q", file, docsBegin, docsEnd)
	}
	want := routesMarkdown(fullServer(t).table)
	if listed == want {
		return
	}
	if os.Getenv("WAITROOM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(file, []byte(head+docsBegin+"\n"+want+docsEnd+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", file)
		return
	}
	t.Errorf("%s's list of paths is out of date; run WAITROOM_UPDATE_DOCS=1 go test ./server -run TestDocsListEveryRoute\nwant:\n%s", file, want)
}

// BenchmarkSplitOwnPaths: what the gate's split costs an upstream request
// to tell it from waitroom's own paths (every row of the table).
func BenchmarkSplitOwnPaths(b *testing.B) {
	paths := fullServer(b).Paths()
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	h, err := gate.Split(nop, nop, paths)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{"/checkout/cart/item", "/api/orders/7", "/api/rooms/demo/tickets/t1/ws"} {
		b.Run(p, func(b *testing.B) {
			w, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
