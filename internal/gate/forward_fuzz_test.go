package gate

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzVisitorRequest: whatever a proxy (or a client reaching the endpoint
// directly) puts in X-Forwarded-Uri, -Method and -Host, forward auth
// either refuses it or builds a request for a path on this origin, never
// another host, and never panics.
func FuzzVisitorRequest(f *testing.F) {
	for _, seed := range [][3]string{
		{"/checkout/cart?size=42", "GET", "shop.example"},
		{"/checkout/?wr_token=a.b.c", "get", ""},
		{"", "", ""},
		{"http://evil.example/", "POST", ""},
		{"//evil.example/x", "GET", ""},
		{"/a b", "GET /x HTTP/1.1", ""},
		{"/%zz", "PATCH", "h:1"},
		{"*", "OPTIONS", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, uri, method, host string) {
		r := httptest.NewRequest("GET", "/api/rooms/shop/forward-auth", nil)
		r.Header.Set("X-Forwarded-Uri", uri)
		r.Header.Set("X-Forwarded-Method", method)
		r.Header.Set("X-Forwarded-Host", host)
		v, err := visitorRequest(r, OriginalOf(r.Header, ""))
		if err != nil {
			return
		}
		if v.URL.Host != "" || v.URL.Scheme != "" || !strings.HasPrefix(v.URL.Path, "/") && v.URL.Path != "" {
			t.Fatalf("uri %q became %q: not a path of this origin", uri, v.URL.String())
		}
		if v.Method == "" || strings.ContainsAny(v.Method, " \t\r\n/") {
			t.Fatalf("method %q became %q", method, v.Method)
		}
	})
}
