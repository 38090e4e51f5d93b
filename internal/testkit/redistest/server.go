// Package redistest gives tests a real redis-server process on a loopback
// port, or an in-process miniredis where redis-server is not installed and
// the environment does not demand it.
package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Server is one Redis server for tests.
type Server struct {
	addr string // 127.0.0.1:port, kept across Kill and Restart
	port int
	dir  string // working directory of redis-server

	mu   sync.Mutex
	proc *process             // running redis-server; nil once killed
	mini *miniredis.Miniredis // the fallback; nil for a real server
}

// Start starts a Redis server of the test's own, stopped when the test ends.
// Tests that kill or restart Redis need their own; others may use Shared.
func Start(tb testing.TB) *Server {
	tb.Helper()
	var s *Server
	var err error
	if fallback(tb) {
		s, err = startMini()
	} else {
		s, err = startReal(tb.TempDir())
	}
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(s.stop)
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return "redis://" + s.addr + "/0" }

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	// A generous pool timeout: tests are not about the pool, and a loaded
	// machine running -race can keep many concurrent calls waiting.
	c := redis.NewClient(&redis.Options{Addr: s.addr, PoolTimeout: 30 * time.Second})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Kill stops the server at once, as a crash would: a real server gets
// SIGKILL. Its data is lost, as with a redis-server that does not persist;
// the fallback is flushed to match. Kill waits until the server is gone.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.mini != nil {
		s.mini.Close()
		s.mini.FlushAll()
		return
	}
	if s.proc != nil {
		s.proc.kill()
		s.proc = nil
	}
}

// Restart starts the server again on the same port, killing it first if it
// runs, and returns once it answers PING.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	if s.mini != nil {
		if err := s.mini.Restart(); err != nil {
			tb.Fatalf("redistest: restart miniredis on %s: %v", s.addr, err)
		}
		return
	}
	p, err := startProcess(s.port, s.dir)
	if err != nil {
		tb.Fatalf("redistest: restart redis-server on %s: %v", s.addr, err)
	}
	s.proc = p
}

func (s *Server) stop() { s.Kill() }

// Prefix returns a key prefix of its own for each call, so tests sharing a
// server never see each other's keys.
func Prefix(tb testing.TB) string {
	tb.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatalf("redistest: prefix: %v", err)
	}
	return "t" + hex.EncodeToString(b[:]) + ":"
}

func startMini() (*Server, error) {
	m, err := miniredis.Run()
	if err != nil {
		return nil, fmt.Errorf("start miniredis: %w", err)
	}
	port, err := strconv.Atoi(m.Port())
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("start miniredis: port %q: %w", m.Port(), err)
	}
	return &Server{addr: m.Addr(), port: port, mini: m}, nil
}
