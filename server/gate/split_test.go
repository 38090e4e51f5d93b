package gate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/waitroom/waitroom/server/gate"
)

func TestSplitKeepsWaitroomsPathsFromTheUpstream(t *testing.T) {
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-By", name) })
	}
	h, err := gate.Split(named("waitroom"), named("gate"), nil)
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
}
