package gate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/waitroom/waitroom/internal/gate"
	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

func TestSplitKeepsWaitroomsPathsFromTheUpstream(t *testing.T) {
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-By", name) })
	}
	h, err := gate.Split(named("waitroom"), named("gate"), waitroomPaths(t))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"/api/rooms/shop/enter":  "waitroom",
		"/api/tokens/verify":     "waitroom",
		"/rooms/shop":            "waitroom",
		"/embed/rooms/shop":      "waitroom",
		"/admin":                 "waitroom",
		"/admin/api/rooms":       "waitroom",
		"/static/app.js":         "waitroom",
		"/.well-known/jwks.json": "waitroom",
		"/healthz":               "waitroom",
		"/metrics":               "waitroom",
		"/api/orders":            "gate",
		"/checkout/cart":         "gate",
		"/":                      "gate",
		"/roomsx":                "gate",
	}
	for path, want := range cases {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if got := w.Header().Get("X-By"); got != want {
			t.Errorf("%s went to %s, want %s", path, got, want)
		}
	}
	if _, err := gate.Split(named("w"), named("g"), []string{"rooms"}); err == nil {
		t.Error("a bad pattern must fail")
	}
	if _, err := gate.Split(named("w"), named("g"), nil); err == nil {
		t.Error("no waitroom paths must fail: everything would go to the upstream")
	}
}

// waitroomPaths are what a full server (metrics, dashboard) serves, from
// its route table.
func waitroomPaths(t *testing.T) []string {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{})
	wr := server.New(line, server.Config{AdminToken: "test-admin-token-0123456789",
		Metrics: http.NotFoundHandler()})
	wr.MountDashboard(dashboard.New(dashboard.Deps{Line: line, AdminToken: "test-admin-token-0123456789"}).Handlers())
	return wr.Paths()
}
