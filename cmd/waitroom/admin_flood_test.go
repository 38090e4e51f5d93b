package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// built is the binary the tests run, linked once per test process: each
// test linking its own cost seconds of CPU apiece.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildBinary builds waitroom once into a temporary directory that
// TestMain removes, and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "waitroom-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "waitroom")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// startOnRedis runs the built binary on a real redis-server (a signing key
// made first, the in-process broker), with args after the usual ones.
func startOnRedis(t *testing.T, bin string, args ...string) (*proc, *redistest.Server) {
	t.Helper()
	rs := redistest.Start(t)
	dataDir := t.TempDir()
	if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("create signing key: %v\n%s", err, out)
	}
	return startBinary(t, bin, append([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(),
		"--kafka-brokers", "embedded", "--embed-demo-addr", "off", "--log-format", "json"}, args...)...), rs
}

// clientFrom is a kept-alive HTTP client whose connections leave from ip (a loopback
// address: 127.0.0.0/8 is all this host's), so the server sees a distinct
// client per address.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 4}}
}

// TestAdminTokenWorksDuringAFlood: through the built binary on a real
// redis-server, 40 client addresses send wrong admin tokens as fast as they
// can; each address gets exactly its --admin-failures-per-ip 401s, then
// 429s; all along the operator's right token is answered 200, from an
// address of its own and from one of the flooding ones (a shared NAT).
func TestAdminTokenWorksDuringAFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const token = "8c1e5a2f90d347b6a1c0e9f87d6b5a43" // as --create-admin-token makes
	p, _ := startOnRedis(t, buildBinary(t), "--admin-token", token, "--admin-failures-per-ip", "5")
	url := "http://" + p.addr + "/admin/api/rooms"
	get := func(c *http.Client, tok string) int {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := c.Do(req)
		if err != nil {
			t.Errorf("GET %s: %v", url, err)
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}

	const addrs, perAddr = 40, 400 // bounded: 16,000 wrong tokens at most; stopped once the operator is done
	var wg sync.WaitGroup
	var sent atomic.Int64
	stop := make(chan struct{})
	counts := make([]map[int]int, addrs)
	for i := range addrs {
		counts[i] = map[int]int{}
		c := clientFrom(fmt.Sprintf("127.0.0.%d", 10+i))
		wg.Go(func() {
			for n := 0; n < perAddr; n++ {
				select {
				case <-stop:
					return
				default:
				}
				counts[i][get(c, fmt.Sprintf("guess-%d-%d-0123456789abcdef", i, n))]++
				sent.Add(1)
			}
		})
	}
	// The operator, while the flood runs: its own address and a flooding one.
	testkit.Until(t, 30*time.Second, "the flood under way", func() bool { return sent.Load() >= addrs*10 })
	refused := 0
	for _, ip := range []string{"127.0.0.200", "127.0.0.10"} {
		c := clientFrom(ip)
		for n := 0; n < 50; n++ {
			if s := get(c, token); s != http.StatusOK {
				refused++
				t.Errorf("operator from %s, request %d during the flood: %d", ip, n+1, s)
			}
		}
	}
	during := sent.Load()
	close(stop)
	wg.Wait()
	t.Logf("%d wrong tokens sent in all, %d before the operator's 100 requests ended; operator refused %d times", sent.Load(), during, refused)
	if during >= addrs*perAddr {
		t.Fatalf("the flood ended before the operator's requests did (%d sent): nothing was tested", during)
	}
	for i, m := range counts {
		total := 0
		for _, n := range m {
			total += n
		}
		if m[http.StatusUnauthorized] != 5 || m[http.StatusUnauthorized]+m[http.StatusTooManyRequests] != total {
			t.Errorf("127.0.0.%d: answers %v, want exactly 5 × 401 and the rest 429", 10+i, m)
		}
	}
	// After the flood too, from every address.
	for i := range addrs {
		if s := get(clientFrom(fmt.Sprintf("127.0.0.%d", 10+i)), token); s != http.StatusOK {
			t.Errorf("operator from a locked-out 127.0.0.%d: %d", 10+i, s)
		}
	}
	p.stop(t)
	// Only the counted failures were logged, not the 429s of the flood.
	p.mu.Lock()
	logged := 0
	for _, l := range p.lines {
		if strings.Contains(l, "admin api: wrong admin token") {
			logged++
		}
	}
	p.mu.Unlock()
	if logged != addrs*5 {
		t.Errorf("%d wrong-token log lines, want %d (5 per address)", logged, addrs*5)
	}
}

// TestShortAdminTokenRefusedAtStart: the binary will not start with an
// admin token of under 128 bits, from the flag or the environment, and says
// what is wrong and how to make one; --create-admin-token makes one that
// starts.
func TestShortAdminTokenRefusedAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	rs := redistest.Start(t)
	base := []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--redis-url", rs.URL(), "--kafka-brokers", "embedded"}
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--admin-token", "0123456789abcdef0123"}, "", "--admin-token (WAITROOM_ADMIN_TOKEN): 20 characters of hex carry at most 80 bits, want 128 or more"},
		{nil, "WAITROOM_ADMIN_TOKEN=hunter2hunter2hunter2", "21 characters of base64 carry at most 126 bits"},
		{nil, "", "--admin-token (WAITROOM_ADMIN_TOKEN) is required with a real Redis"},
	} {
		cmd := exec.Command(bin, append(base, tc.args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "waitroom --create-admin-token") {
			t.Errorf("%v %s: %v\n%s\nwant an error saying %q and how to make a token", tc.args, tc.env, err, out, tc.want)
		}
	}
	out, err := exec.Command(bin, "--create-admin-token").Output()
	tok := strings.TrimSpace(string(out))
	if err != nil || len(tok) != 32 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("--create-admin-token: %v %q, want 32 hex characters", err, out)
	}
	p, _ := startOnRedis(t, bin, "--admin-token", tok)
	if s := call(t, http.DefaultClient, "GET", "http://"+p.addr+"/admin/api/rooms", tok, "").status; s != http.StatusOK {
		t.Fatalf("the created token: %d", s)
	}
	p.stop(t)
}
