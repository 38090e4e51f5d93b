package redistest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Shared returns the one server of the test binary, started on first use.
// Tests sharing it keep apart with Prefix and must not Kill or Restart it.
//
// Call Main from TestMain to stop it when the tests end; without Main it dies
// with the test binary (on Linux) and leaves an empty temporary directory.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	use := fallback(tb)
	shared.once.Do(func() {
		if use {
			shared.srv, shared.err = startMini()
			return
		}
		dir, err := os.MkdirTemp("", "redistest-")
		if err != nil {
			shared.err = fmt.Errorf("shared server dir: %w", err)
			return
		}
		shared.srv, shared.err = startReal(dir)
		if shared.err != nil {
			_ = os.RemoveAll(dir)
		}
	})
	if shared.err != nil {
		tb.Fatalf("redistest: shared server: %v", shared.err)
	}
	return shared.srv
}

// Main runs the tests, stops the shared server and cluster and exits with
// the tests' code. Packages using Shared or SharedCluster call it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
func Main(m *testing.M) {
	// go-redis prints every failed dial; tests that kill Redis would bury
	// their own output under them. Failed calls still return their errors.
	redis.SetLogger(quietRedis{})
	code := m.Run()
	stopShared()
	stopSharedCluster()
	os.Exit(code)
}

func stopShared() {
	if s := shared.srv; s != nil {
		s.Kill()
		if s.dir != "" {
			_ = os.RemoveAll(s.dir)
		}
	}
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
