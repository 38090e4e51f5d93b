// Package tooltest finds the real programs some tests run beside waitroom
// (nginx, Prometheus, node, python3) and starts them as child processes. A
// test whose program is missing skips, saying what to install, unless
// WAITROOM_REQUIRE_TOOLS=1 (CI), where it fails instead.
package tooltest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// RequireEnv makes a missing program a failure rather than a skip.
const RequireEnv = "WAITROOM_REQUIRE_TOOLS"

// Need returns the path of program (a name on PATH or an absolute path),
// or skips (fails under WAITROOM_REQUIRE_TOOLS=1) with hint. Under -short it
// always skips: the fast tier runs with Go alone.
func Need(t testing.TB, program, hint string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("this test runs %s; the fast tier (-short) runs with Go alone", program)
	}
	p, err := exec.LookPath(program)
	if err == nil {
		return p
	}
	Missing(t, program+" ("+hint+")")
	return ""
}

// Missing skips the test for want (what to install), or fails it under
// WAITROOM_REQUIRE_TOOLS=1.
func Missing(t testing.TB, want string) {
	t.Helper()
	msg := "this test needs " + want
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + "; " + RequireEnv + "=1 makes that a failure")
	}
	t.Skip(msg + "; set " + RequireEnv + "=1 to fail instead of skipping")
}

// FreeAddr returns a loopback host:port nobody listens on now. Another
// process may take it before the caller does; the ports are ephemeral.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Port is the port of a host:port.
func Port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Start runs cmd until the test ends, keeping its output to show if the
// test fails.
func Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", cmd.Path, out.String())
		}
	})
}

// WaitListening waits until addr takes connections, at most d.
func WaitListening(t testing.TB, addr string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen within %v: %v", addr, d, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a port: there is no signal to await
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// StartNginx runs a real nginx (Debian's /usr/sbin/nginx) with site (a
// server config for nginx's http context, as deploy/nginx/waitroom.conf)
// included, and returns once it takes connections on listenAddr, which
// site must listen on. It skips the test where nginx is not installed.
func StartNginx(t testing.TB, site, listenAddr string) {
	t.Helper()
	bin := Need(t, "/usr/sbin/nginx", "apt-get install nginx")
	dir := t.TempDir()
	user := ""
	if os.Getuid() == 0 {
		user = "user root root;" // the workers must reach the temp dir
	}
	conf := fmt.Sprintf(`%s
worker_processes 1;
error_log %[2]s/error.log warn;
pid %[2]s/nginx.pid;
events { worker_connections 2048; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/waitroom.conf;
}
`, user, dir)
	if err := os.WriteFile(filepath.Join(dir, "waitroom.conf"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	test := exec.Command(bin, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	if out, err := test.CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
	Start(t, exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;"))
	WaitListening(t, listenAddr, 10*time.Second)
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "error.log")); err == nil {
				t.Logf("nginx error.log:\n%s", b)
			}
		}
	})
}
