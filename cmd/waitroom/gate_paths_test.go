package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestGateKeepsWaitroomsOwnPaths: with --upstream, waitroom's own paths
// (its route table: metrics, health, dashboard, admin API, assets, the demo
// shop) are answered by waitroom and never reach the upstream checkout;
// any other path does.
func TestGateKeepsWaitroomsOwnPaths(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		w.Header().Set("X-Upstream", "yes")
		_, _ = io.WriteString(w, "upstream "+r.URL.Path)
	}))
	t.Cleanup(up.Close)
	addr := startForTest(t, "--upstream", up.URL, "--protect", "/checkout/*", "--gate-room", "demo")
	get := func(path string) (*http.Response, string) {
		t.Helper()
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := c.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	res, body := get("/metrics")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "# TYPE waitroom_") {
		t.Errorf("/metrics: %d %.80q, want waitroom's metrics", res.StatusCode, body)
	}
	for _, p := range []string{"/livez", "/readyz", "/api/openapi.yaml", "/.well-known/jwks.json", "/admin", "/admin/login",
		"/admin/api/rooms", "/admin/api/nothing", "/static/waitroom-embed.js", "/rooms/demo", "/shop"} {
		if res, _ := get(p); res.Header.Get("X-Upstream") != "" {
			t.Errorf("%s reached the upstream", p)
		}
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the upstream saw waitroom's paths: %v", seen)
	}
	mu.Unlock()
	if res, body := get("/about"); res.Header.Get("X-Upstream") != "yes" || body != "upstream /about" {
		t.Errorf("/about: %d %q, want the upstream's", res.StatusCode, body)
	}
}
