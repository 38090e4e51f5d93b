package clientip

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestExtractorTrustsOnlyConfiguredProxies(t *testing.T) {
	trusted, err := ParseTrusted("10.0.0.0/8, 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer, xff, want string
		trusted               bool
	}{
		{"no proxies: header ignored", "127.0.0.1:5000", "203.0.113.9", "127.0.0.1", false},
		{"untrusted peer: header ignored", "198.51.100.1:5000", "203.0.113.9", "198.51.100.1", true},
		{"trusted peer: forwarded client", "10.1.2.3:5000", "203.0.113.9", "203.0.113.9", true},
		{"trusted single address", "192.0.2.7:5000", "203.0.113.9", "203.0.113.9", true},
		{"spoofed left-most entry ignored", "10.1.2.3:5000", "1.2.3.4, 203.0.113.9", "203.0.113.9", true},
		{"chain of trusted proxies", "10.1.2.3:5000", "203.0.113.9, 10.9.9.9", "203.0.113.9", true},
		{"loopback not trusted by default", "127.0.0.1:5000", "203.0.113.9", "127.0.0.1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var list = trusted
			if !tc.trusted {
				list = nil
			}
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = tc.peer
			req.Header.Set(echo.HeaderXForwardedFor, tc.xff)
			if got := Extractor(list)(req); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseTrustedRefusesJunk(t *testing.T) {
	for _, in := range []string{"nope", "10.0.0.0/33", "1.2.3"} {
		if _, err := ParseTrusted(in); err == nil {
			t.Errorf("ParseTrusted(%q): want an error", in)
		}
	}
}

func TestBucketGroupsIPv6By64(t *testing.T) {
	if a, b := Bucket("2001:db8:1:2::1"), Bucket("2001:db8:1:2:ffff::9"); a != b {
		t.Fatalf("same /64 in two buckets: %q %q", a, b)
	}
	if a, b := Bucket("2001:db8:1:2::1"), Bucket("2001:db8:1:3::1"); a == b {
		t.Fatalf("two /64s in one bucket: %q", a)
	}
	if got := Bucket("::ffff:203.0.113.9"); got != "203.0.113.9" {
		t.Fatalf("mapped IPv4: got %q", got)
	}
}

func TestNetwork(t *testing.T) {
	for _, c := range []struct {
		ip   string
		bits int
		want string
	}{
		{"198.51.100.7", 32, "198.51.100.7"},
		{"198.51.100.7", 24, "198.51.100.0/24"},
		{"::ffff:198.51.100.7", 16, "198.51.0.0/16"},
		{"198.51.100.7", 0, "198.51.100.7"},
		{"2001:db8:1:2:3:4:5:6", 24, "2001:db8:1:2::/64"},
		{"junk", 24, "junk"},
	} {
		if got := Network(c.ip, c.bits); got != c.want {
			t.Errorf("Network(%s, %d) = %s, want %s", c.ip, c.bits, got, c.want)
		}
	}
}
