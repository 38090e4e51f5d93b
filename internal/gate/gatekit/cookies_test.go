package gatekit

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestSafeReturn(t *testing.T) {
	cases := map[string]bool{
		"/checkout/cart?x=1":    true,
		"/":                     true,
		"":                      false,
		"//evil.example/x":      false,
		"/\\evil.example":       false,
		"https://evil.example/": false,
		"checkout":              false,
		"/a\r\nSet-Cookie: x":   false,
	}
	for dest, want := range cases {
		if got := safeReturn(dest); got != want {
			t.Errorf("safeReturn(%q) = %v, want %v", dest, got, want)
		}
	}
}

func TestWithoutToken(t *testing.T) {
	cases := map[string]string{
		"/c?wr_token=a.b.c":     "/c",
		"/c?x=1&wr_token=a.b.c": "/c?x=1",
		"/c":                    "/c",
		"/c?wr_code=h.abc&x=2":  "/c?x=2",
	}
	for in, want := range cases {
		if got := withoutToken(in); got != want {
			t.Errorf("withoutToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlausibleCode(t *testing.T) {
	for code, want := range map[string]bool{
		"h.IDAwMDAw_-x":                  true,
		"":                               false,
		"h.":                             false,
		"eyJ.eyJ.sig":                    false,
		"h.a b":                          false,
		"h.<script>":                     false,
		"h." + string(make([]byte, 300)): false,
	} {
		if got := plausibleCode(code); got != want {
			t.Errorf("plausibleCode(%.20q) = %v, want %v", code, got, want)
		}
	}
}

func TestReturnCookieRoundTrip(t *testing.T) {
	c := Cookies{}
	w := httptest.NewRecorder()
	c.remember(w, httptest.NewRequest("GET", "/checkout/cart?size=42&wr_token=a.b.c", nil))
	r := httptest.NewRequest("GET", "/checkout/?wr_token=a.b.c", nil)
	for _, ck := range w.Result().Cookies() {
		r.AddCookie(ck)
	}
	if got := c.takeReturn(httptest.NewRecorder(), r); got != "/checkout/cart?size=42" {
		t.Errorf("takeReturn = %q, want /checkout/cart?size=42", got)
	}

	// A form post comes back to the page it was on, if on this origin.
	post := httptest.NewRequest("POST", "/api/orders", nil)
	post.Header.Set("Referer", "http://example.com/checkout/pay")
	w = httptest.NewRecorder()
	c.remember(w, post)
	if len(w.Result().Cookies()) != 1 {
		t.Fatalf("cookies = %v, want the return path", w.Result().Cookies())
	}
	post.Header.Set("Referer", "http://evil.example/x")
	w = httptest.NewRecorder()
	c.remember(w, post)
	if len(w.Result().Cookies()) != 0 {
		t.Errorf("a foreign referer must not be remembered: %v", w.Result().Cookies())
	}
}

func TestStripCookies(t *testing.T) {
	h := http.Header{}
	h.Add("Cookie", `session=abc; wr_vid=0123456789abcdef0123456789abcdef; pref="q v"`)
	h.Add("Cookie", "wr_return=L2E; wr_token=a.b.c")
	stripCookies(h)
	if got, want := h.Get("Cookie"), `session=abc; pref="q v"; wr_token=a.b.c`; got != want {
		t.Errorf("Cookie = %q, want %q", got, want)
	}
	h = http.Header{}
	h.Set("Cookie", "wr_vid=x")
	stripCookies(h)
	if _, ok := h["Cookie"]; ok {
		t.Errorf("Cookie = %q, want none", h.Get("Cookie"))
	}
}
