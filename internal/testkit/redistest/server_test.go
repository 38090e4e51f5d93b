package redistest

import (
	"context"
	"errors"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { Main(m) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestStartAnswers(t *testing.T) {
	if fallback(t) {
		t.Skip("redis-server is not on PATH: this test is about the real server")
	}
	s := Start(t)
	if s.mini != nil {
		t.Fatal("started miniredis although redis-server is on PATH")
	}
	c := s.Client(t)
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx(t), "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET = %q, %v", got, err)
	}
	info, err := c.Info(ctx(t), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^redis_version:`).MatchString(info) {
		t.Fatalf("INFO does not look like redis-server:\n%s", info)
	}
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if opt.Addr != s.Addr() || opt.DB != 0 {
		t.Fatalf("URL %s parses to %s db %d, want %s db 0", s.URL(), opt.Addr, opt.DB, s.Addr())
	}
}

func TestServersAreSeparate(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Addr() == b.Addr() {
		t.Fatalf("two servers on %s", a.Addr())
	}
	if err := a.Client(t).Set(ctx(t), "only-a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Client(t).Exists(ctx(t), "only-a").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS on the other server = %d, %v", n, err)
	}
}

func TestKillAndRestart(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	addr := s.Addr()
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	s.Kill()
	if err := c.Ping(ctx(t)).Err(); err == nil {
		t.Fatal("PING answered after Kill")
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatal("port still accepts connections after Kill")
	}
	s.Kill() // a second Kill is harmless

	s.Restart(t)
	if s.Addr() != addr {
		t.Fatalf("restarted on %s, want %s", s.Addr(), addr)
	}
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("the same client cannot PING after Restart: %v", err)
	}
	if n, err := c.Exists(ctx(t), "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS after restart = %d, %v; a killed server keeps nothing", n, err)
	}

	s.Restart(t) // restarting a running server replaces it
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after a second Restart: %v", err)
	}
}

func TestCleanupStopsServer(t *testing.T) {
	var s *Server
	t.Run("owner", func(t *testing.T) { s = Start(t) })
	if s.proc != nil {
		t.Fatal("server process still recorded after its test's cleanup")
	}
	if _, err := serverPID(s.Addr()); err == nil {
		t.Fatal("server still answers after its test's cleanup")
	}
}

func TestShared(t *testing.T) {
	a, b := Shared(t), Shared(t)
	if a != b {
		t.Fatal("Shared started a second server")
	}
	if err := a.Client(t).Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestPrefix(t *testing.T) {
	form := regexp.MustCompile(`^t[0-9a-f]{16}:$`)
	seen := map[string]bool{}
	for range 1000 {
		p := Prefix(t)
		if !form.MatchString(p) {
			t.Fatalf("prefix %q", p)
		}
		if seen[p] {
			t.Fatalf("prefix %q given twice", p)
		}
		seen[p] = true
	}
}

func TestFallbackToMiniredis(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("WAITROOM_REQUIRE_REDIS", "")
	old := redisServer
	redisServer = "redis-server-not-installed"
	t.Cleanup(func() { redisServer = old })

	s := Start(t)
	if s.mini == nil {
		t.Fatal("no fallback although redis-server is missing")
	}
	c := s.Client(t)
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := c.Ping(ctx(t)).Err(); err == nil {
		t.Fatal("PING answered after Kill")
	}
	s.Restart(t)
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
	if n, err := c.Exists(ctx(t), "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS after restart = %d, %v; Kill must lose data as a real server does", n, err)
	}
}

func TestDecide(t *testing.T) {
	missing := errors.New("not found")
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	cases := []struct {
		name      string
		lookErr   error
		env       map[string]string
		wantMini  bool
		wantError bool
	}{
		{"installed", nil, nil, false, false},
		{"installed in CI", nil, map[string]string{"CI": "true"}, false, false},
		{"missing on a laptop", missing, nil, true, false},
		{"missing in CI", missing, map[string]string{"CI": "true"}, false, true},
		{"missing, required", missing, map[string]string{"WAITROOM_REQUIRE_REDIS": "1"}, false, true},
		{"missing, not required", missing, map[string]string{"WAITROOM_REQUIRE_REDIS": "0"}, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mini, err := decide(c.lookErr, env(c.env))
			if mini != c.wantMini || (err != nil) != c.wantError {
				t.Fatalf("decide = %v, %v; want fallback %v, error %v", mini, err, c.wantMini, c.wantError)
			}
			if err != nil && !regexp.MustCompile(`redis-server is required in CI: apt-get install redis-server`).MatchString(err.Error()) {
				t.Fatalf("error %q does not say how to fix it", err)
			}
		})
	}
}

func TestRestartFromAnOlderSnapshot(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	if err := c.Set(ctx(t), "k", "old", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rdb := s.Snapshot(t)
	if err := c.Set(ctx(t), "k", "new", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx(t), "later", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.RestartFrom(t, rdb)
	if v, err := c.Get(ctx(t), "k").Result(); err != nil || v != "old" {
		t.Fatalf("k after the restart from the snapshot = %q, %v; want old", v, err)
	}
	if n, err := c.Exists(ctx(t), "later").Result(); err != nil || n != 0 {
		t.Fatalf("a key written after the snapshot came back: %d %v", n, err)
	}
	s.Restart(t) // a plain restart is empty, as before
	if n, err := c.Exists(ctx(t), "k").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS after a plain restart = %d, %v", n, err)
	}
}
