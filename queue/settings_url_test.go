package queue

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
)

// urlCases are target_url candidates and whether they may be stored. The
// bypasses a browser reads as another site are refused; "/%5Cevil" is a
// path here (browsers keep escapes escaped), so it is allowed.
var urlCases = map[string]bool{
	"/checkout": true, "/": true, "/checkout?x=1#top": true, "/%5Cevil.example": true, "/%2F%2Fevil": true,
	"https://shop.example/checkout": true, "http://127.0.0.1:8081/buy": true, "HTTPS://shop.example": true,

	"":                                   false,
	"//evil.example":                     false,
	`/\evil.example`:                     false,
	`/\\evil`:                            false,
	`\\evil`:                             false,
	`\/evil.example`:                     false,
	`https://shop.example\@evil`:         false,
	"/\tevil":                            false,
	" //evil.example":                    false,
	"/ok\n":                              false,
	"/\x00":                              false,
	"\u00a0//evil":                       false,
	"evil.example":                       false,
	"checkout":                           false,
	"https:evil.example":                 false,
	"https:/evil.example":                false,
	"https:///evil.example":              false,
	"https://:443/":                      false,
	"javascript:alert(1)":                false,
	"data:text/html,hi":                  false,
	"ftp://files.example/":               false,
	"https://user:pw@shop.example/":      false,
	"/" + strings.Repeat("a", maxURLLen): false,
}

func TestValidateTargetURLRefusesOffSiteBypasses(t *testing.T) {
	for raw, ok := range urlCases {
		if err := validateTargetURL(raw); (err == nil) != ok {
			t.Errorf("validateTargetURL(%q) = %v, want allowed %v", raw, err, ok)
		}
	}
	// prometheus_url: absolute only; basic auth in it is its own business.
	for raw, ok := range map[string]bool{
		"http://prometheus:9090": true, "https://u:p@prom.example/prefix": true,
		"/api": false, "//prom": false, `http://prom\@evil`: false, "prom:9090": false,
	} {
		if err := validateURL(raw, false); (err == nil) != ok {
			t.Errorf("validateURL(%q, server) = %v, want allowed %v", raw, err, ok)
		}
	}
}

// FuzzValidateTargetURL: whatever is accepted, a browser resolving it
// against a page of this site lands on this site (a path) or on the host
// the URL names over http(s); and nothing a browser would rewrite survives.
func FuzzValidateTargetURL(f *testing.F) {
	for raw := range urlCases {
		f.Add(raw)
	}
	base, _ := url.Parse("https://waitroom.test/rooms/demo")
	f.Fuzz(func(t *testing.T, raw string) {
		if validateTargetURL(raw) != nil {
			return
		}
		if strings.ContainsAny(raw, `\`) || strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			t.Fatalf("accepted %q with a backslash, space or control character", raw)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted %q that does not parse: %v", raw, err)
		}
		got := base.ResolveReference(u)
		if u.Scheme == "" {
			if got.Host != base.Host || !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") {
				t.Fatalf("accepted path %q resolves to host %q", raw, got.Host)
			}
			return
		}
		if (got.Scheme != "http" && got.Scheme != "https") || got.Host == "" || u.User != nil {
			t.Fatalf("accepted %q: scheme %q host %q", raw, got.Scheme, got.Host)
		}
	})
}
