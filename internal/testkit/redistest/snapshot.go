package redistest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// rdbName is redis-server's default RDB file, which it loads when it starts.
const rdbName = "dump.rdb"

// Snapshot saves the data (SAVE) and copies the RDB file aside: the older
// snapshot RestartFrom brings back, as a Redis restarted from a stale dump
// (its default save settings) would. It skips the test on the miniredis
// fallback, which writes no RDB.
func (s *Server) Snapshot(tb testing.TB) string {
	tb.Helper()
	if s.mini != nil {
		tb.Skip("redistest: snapshots need redis-server (miniredis writes no RDB)")
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Save(ctx).Err(); err != nil {
		tb.Fatalf("redistest: SAVE on %s: %v", s.addr, err)
	}
	data, err := os.ReadFile(filepath.Join(s.dir, rdbName))
	if err != nil {
		tb.Fatalf("redistest: read the RDB: %v", err)
	}
	aside := filepath.Join(tb.TempDir(), rdbName)
	if err := os.WriteFile(aside, data, 0o600); err != nil {
		tb.Fatalf("redistest: copy the RDB aside: %v", err)
	}
	// Gone from the server's directory: Restart still brings it back empty.
	if err := os.Remove(filepath.Join(s.dir, rdbName)); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return aside
}

// RestartFrom kills the server (SIGKILL: nothing written since is kept)
// and starts it again on the same port from the RDB file rdb, a copy made
// by Snapshot: Redis comes back with the data as it was then.
func (s *Server) RestartFrom(tb testing.TB, rdb string) {
	tb.Helper()
	if s.mini != nil {
		tb.Skip("redistest: snapshots need redis-server")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	data, err := os.ReadFile(rdb)
	if err != nil {
		tb.Fatalf("redistest: read %s: %v", rdb, err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, rdbName), data, 0o600); err != nil {
		tb.Fatalf("redistest: put the RDB back: %v", err)
	}
	p, err := startProcess(s.port, s.dir)
	_ = os.Remove(filepath.Join(s.dir, rdbName)) // loaded: a later Restart is empty again
	if err != nil {
		tb.Fatalf("redistest: restart redis-server on %s from %s: %v", s.addr, rdb, err)
	}
	s.proc = p
}
