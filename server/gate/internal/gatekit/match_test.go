package gatekit

import "testing"

func TestPatterns(t *testing.T) {
	p, err := ParsePatterns([]string{"/checkout/*", "/api/orders", "/shops/*/pay/*", " "})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"/checkout":              true,
		"/checkout/":             true,
		"/checkout/cart":         true,
		"/checkout/a/b/c":        true,
		"/checkoutx":             false,
		"/api/orders":            true,
		"/api/orders/":           true, // cleaned
		"/api/orders/7":          false,
		"/api//orders":           true, // cleaned
		"/about/../api/orders":   true, // cleaned
		"/api/orders;jsessionid": true, // ;params dropped
		"/api/ORDERS":            false,
		"/shops/a/pay":           true,
		"/shops/a/pay/x":         true,
		"/shops/a/b/pay":         false,
		"/":                      false,
		"":                       false,
	}
	for path, want := range cases {
		if got := p.Match(path); got != want {
			t.Errorf("Match(%q) = %v, want %v", path, got, want)
		}
	}

	all, _ := ParsePatterns([]string{"/*"})
	if !all.Match("/") || !all.Match("/x/y") {
		t.Error(`"/*" must match everything`)
	}
	for _, bad := range []string{"checkout/*", "/[a"} {
		if _, err := ParsePatterns([]string{bad}); err == nil {
			t.Errorf("ParsePatterns(%q): want an error", bad)
		}
	}
	var none *Patterns
	if none.Match("/x") || !none.Empty() {
		t.Error("nil patterns match nothing and are empty")
	}
}
