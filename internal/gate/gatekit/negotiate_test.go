package gatekit

import (
	"net/http/httptest"
	"testing"
)

func TestWantsHTML(t *testing.T) {
	cases := []struct {
		accept, mode string
		want         bool
	}{
		{"text/html", "", true},
		{"TEXT/HTML", "", true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "", true}, // a browser
		{"application/xhtml+xml", "", true},
		{"text/*", "", true},
		{"*/*", "", false}, // curl, fetch
		{"", "", false},
		{"application/json", "", false},
		{"application/problem+json", "", false},
		{"application/vnd.api+json", "", false},
		{"application/json, text/html;q=0.5", "", false},
		{"text/html;q=0.5, application/json;q=0.5", "", true}, // a tie goes to the page
		{"text/html;q=0", "", false},
		{"text/html;q=oops", "", true}, // a broken q counts as 1
		{"text/html;;", "", true},      // mime refuses it, the type still counts
		{"*/*", "navigate", true},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/checkout", nil)
		if c.accept != "" {
			r.Header.Set("Accept", c.accept)
		}
		if c.mode != "" {
			r.Header.Set("Sec-Fetch-Mode", c.mode)
		}
		if got := WantsHTML(r); got != c.want {
			t.Errorf("Accept %q, Sec-Fetch-Mode %q: WantsHTML = %v, want %v", c.accept, c.mode, got, c.want)
		}
	}
}
