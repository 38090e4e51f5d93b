package testkit

import (
	"testing"
	"time"
)

// Eventually polls cond until it holds, failing the test with what after
// limit. It is for effects with nothing to await: another process, a loop
// on its own clock, Redis state written by a goroutine.
func Eventually(tb testing.TB, limit time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for wait := time.Millisecond; !cond(); {
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: never %s", limit, what)
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}
