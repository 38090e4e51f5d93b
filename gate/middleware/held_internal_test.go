package middleware

import (
	"fmt"
	"testing"
	"time"
)

// What the middleware remembers of tokens stays bounded, and goes with
// each token's exp.
func TestHeldStaysBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newHeld(50)
	h.now = func() time.Time { return now }
	for i := range 500 {
		h.bind(fmt.Sprint("jti-", i), "v:a", now.Add(time.Minute))
		if len(h.entries) > 50 {
			t.Fatalf("%d entries, want at most 50", len(h.entries))
		}
	}
	h.bind("last", "v:b", now.Add(time.Minute))
	if h.heldBy("last") != "v:b" {
		t.Fatal("the newest binding was dropped")
	}
	h = newHeld(50)
	h.now = func() time.Time { return now }
	h.bind("mine", "v:a", now.Add(time.Minute))
	h.complete("done", now.Add(time.Minute))
	if h.heldBy("mine") != "v:a" || !h.completed("done") {
		t.Fatal("fresh entries were lost")
	}
	now = now.Add(time.Minute)
	if h.heldBy("mine") != "" || h.completed("done") {
		t.Error("entries outlived their token")
	}
}
