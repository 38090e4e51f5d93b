package testkit

import (
	"fmt"
	"testing"
	"time"
)

// Eventually polls cond until it returns nil, failing the test with cond's
// last error after limit. It is for effects with nothing to await: another
// process, a loop on its own clock, Redis state written by a goroutine. The
// error says what was seen, so a failure shows the last state, not only
// that time ran out.
func Eventually(tb testing.TB, limit time.Duration, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %v", limit, err)
		}
		time.Sleep(wait)
	}
}

// Until is Eventually for a yes-or-no condition: what names it in the failure.
func Until(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	Eventually(tb, limit, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("%s: not yet", what)
	})
}
