package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

var fallbackLogged sync.Once

// fallback reports whether to use miniredis: under -short (the fast tier
// is the same with or without redis-server installed) or because
// redis-server is missing. Where a real server is required it fails the test
// instead, so CI never passes on the weaker fallback by accident.
func fallback(tb testing.TB) bool {
	tb.Helper()
	if testing.Short() {
		return true
	}
	_, lookErr := exec.LookPath(redisServer)
	use, err := decide(lookErr, os.Getenv)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	if use {
		fallbackLogged.Do(func() {
			tb.Logf("redistest: %s is not on PATH, so tests run against in-process miniredis, "+
				"which lacks some commands and real crashes; install redis-server to test for real", redisServer)
		})
	}
	return use
}

// decide turns the PATH lookup and the environment into a choice.
func decide(lookErr error, getenv func(string) string) (bool, error) {
	if lookErr == nil {
		return false, nil
	}
	if getenv("CI") != "" || getenv("WAITROOM_REQUIRE_REDIS") == "1" {
		return false, fmt.Errorf("redis-server is required in CI: apt-get install redis-server (%v)", lookErr)
	}
	return true, nil
}

// SkipShortOrFallback skips a test that is only worth running on a real
// redis-server: under -short (the fast tier runs its twin on miniredis or the
// memory store) and where Shared would fall back to miniredis, which the
// twin covers already. In CI a missing redis-server fails it instead.
func SkipShortOrFallback(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("redistest: -short runs this on miniredis or the memory store; the full tier runs it on redis-server")
	}
	if fallback(tb) {
		tb.Skipf("redistest: %s is not installed; its miniredis twin runs instead", redisServer)
	}
}

// Real reports whether Shared is a real redis-server here (false where it
// falls back to miniredis). Tests at scale use it to size their load.
func Real(tb testing.TB) bool {
	tb.Helper()
	return !fallback(tb)
}
