package metrics_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/waitroom/waitroom/internal/operator/metrics"
)

func TestGuard(t *testing.T) {
	m, _ := newMetrics(t, metrics.Sources{})
	allow, err := metrics.ParseAllow("10.0.0.0/8, 192.168.1.7, 2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		guard  metrics.Guard
		remote string
		auth   string
		want   int
		code   string
	}{
		{"default: loopback", metrics.Guard{}, "127.0.0.1:5000", "", 200, ""},
		{"default: loopback v6", metrics.Guard{}, "[::1]:5000", "", 200, ""},
		{"default: remote", metrics.Guard{}, "203.0.113.9:5000", "", 403, "forbidden"},
		{"token: right, from anywhere", metrics.Guard{Token: "s3cret"}, "203.0.113.9:5000", "Bearer s3cret", 200, ""},
		{"token: missing", metrics.Guard{Token: "s3cret"}, "127.0.0.1:5000", "", 401, "unauthorized"},
		{"token: wrong", metrics.Guard{Token: "s3cret"}, "203.0.113.9:5000", "Bearer s3cre", 401, "unauthorized"},
		{"allow: network", metrics.Guard{Allow: allow}, "10.1.2.3:5000", "", 200, ""},
		{"allow: address", metrics.Guard{Allow: allow}, "192.168.1.7:5000", "", 200, ""},
		{"allow: v4-mapped", metrics.Guard{Allow: allow}, "[::ffff:10.9.9.9]:5000", "", 200, ""},
		{"allow: v6", metrics.Guard{Allow: allow}, "[2001:db8::1]:5000", "", 200, ""},
		{"allow: neighbour", metrics.Guard{Allow: allow}, "192.168.1.8:5000", "", 403, "forbidden"},
		{"allow: replaces loopback", metrics.Guard{Allow: allow}, "127.0.0.1:5000", "", 403, "forbidden"},
		{"both: listed, no token", metrics.Guard{Token: "s3cret", Allow: allow}, "10.1.2.3:5000", "", 401, "unauthorized"},
		{"both: token, not listed", metrics.Guard{Token: "s3cret", Allow: allow}, "203.0.113.9:5000", "Bearer s3cret", 403, "forbidden"},
		{"both: listed with token", metrics.Guard{Token: "s3cret", Allow: allow}, "10.1.2.3:5000", "bearer s3cret", 200, ""},
		{"bad remote", metrics.Guard{}, "pipe", "", 403, "forbidden"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			r.RemoteAddr = c.remote
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			}
			w := httptest.NewRecorder()
			m.Handler(c.guard).ServeHTTP(w, r)
			if w.Code != c.want {
				t.Fatalf("status %d, want %d: %s", w.Code, c.want, w.Body)
			}
			if c.code == "" {
				return
			}
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != c.code || body.Error.Message == "" {
				t.Fatalf("body %s (%v), want code %s", w.Body, err, c.code)
			}
			if c.want == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	got, err := metrics.ParseAllow(" 10.1.2.3/8 ,::1, ,")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := metrics.ParseAllow("10.0.0.0/8,intranet"); err == nil {
		t.Fatal("a name parsed as an address")
	}
}

// TestHandlerOverHTTP: a loopback scraper through a real listener gets in.
func TestHandlerOverHTTP(t *testing.T) {
	m, _ := newMetrics(t, metrics.Sources{})
	m.KafkaPublishError()
	srv := httptest.NewServer(m.Handler(metrics.Guard{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") == "" {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
