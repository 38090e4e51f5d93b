package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestRaiseFileLimit lowers this process's soft open-file limit and raises
// it back: the server starts at its hard limit.
func TestRaiseFileLimit(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if rl.Max < 1024 {
		t.Skipf("hard limit %d: too low to lower", rl.Max)
	}
	orig := rl
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	low := rl
	low.Cur = 512
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	before, now, err := raiseFileLimit()
	if err != nil || before != 512 || now != uint64(rl.Max) {
		t.Fatalf("raiseFileLimit() = %d, %d, %v; want 512, %d", before, now, err, rl.Max)
	}
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || uint64(rl.Cur) != now {
		t.Fatalf("soft limit after raising: %d %v", rl.Cur, err)
	}
}

// holder keeps n connections open from one loopback address, and opens a
// new one whenever the server closes one, for as long as ctx lasts. On each
// it sends first (nothing: a silent connection; or a request whose body
// never comes: a busy one).
type holder struct {
	open atomic.Int64
	wg   sync.WaitGroup
}

const slowBody = "POST /api/rooms/sale/enter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"

func hold(ctx context.Context, from, target string, n int, first string, redial time.Duration) *holder {
	h := &holder{}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	for range n {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			for ctx.Err() == nil {
				c, err := d.DialContext(ctx, "tcp", target)
				if err == nil {
					h.open.Add(1)
					_, _ = io.WriteString(c, first)
					stop := context.AfterFunc(ctx, func() { _ = c.Close() })
					_, _ = io.Copy(io.Discard, c) // until the server closes it
					stop()
					_ = c.Close()
					h.open.Add(-1)
				}
				select { // bounds the re-dial rate
				case <-ctx.Done():
				case <-time.After(redial):
				}
			}
		}()
	}
	return h
}

var leasesLine = regexp.MustCompile(`(?m)^waitroom_admitter_leases (\d+)$`)

// leases reads the admitter lease gauge from /metrics; -1 when the
// scrape's connection was refused at the cap (503).
func leases(t *testing.T, base string) int {
	t.Helper()
	res, err := from("127.0.0.1", false).Get(base + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode == 503 && res.Header.Get("Retry-After") != "" {
		return -1
	}
	b, _ := io.ReadAll(res.Body)
	m := leasesLine.FindSubmatch(b)
	if m == nil {
		t.Fatalf("metrics: no waitroom_admitter_leases (%d)", res.StatusCode)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestOneAddressCannotStarveTheServer runs the built binary on a real
// redis-server with a file limit of 1,024: --max-conns auto is then 512,
// and --max-conns-per-ip is 100. One address holds its 100 connections
// busy (requests whose body never comes) and is refused more with 503 and
// Retry-After, while another address is served; then 12 addresses try to
// hold 1,200 silent connections, more than the file limit: the server never
// runs out of descriptors, keeps its room's admitter lease throughout, and
// serves an honest visitor, the oldest silent connections making room.
func TestOneAddressCannotStarveTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	rs := redistest.Start(t)
	dataDir := t.TempDir()
	if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("create signing key: %v\n%s", err, out)
	}
	const token = "conns-test-admin-token-0123456789"
	// A soft limit under the hard one, as many systems start a service:
	// the server raises it (Go's runtime does too) and sizes --max-conns by it.
	p := startBinary(t, "sh", "-c", `ulimit -Sn 256 && ulimit -Hn 1024 && exec "$0" "$@"`, bin,
		"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(), "--kafka-brokers", "embedded",
		"--admin-token", token, "--embed-demo-addr", "off", "--log-format", "json", "--max-conns-per-ip", "100")
	defer p.stop(t)
	base := "http://" + p.addr

	p.mu.Lock()
	var limits map[string]any
	for _, l := range p.lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "open-file limit" {
			limits = m
		}
	}
	p.mu.Unlock()
	if limits == nil || limits["now"] != float64(1024) || limits["max_conns"] != float64(512) || limits["max_conns_per_ip"] != float64(100) {
		t.Fatalf("open-file limit log line: %v; want now 1024, max_conns 512, max_conns_per_ip 100", limits)
	}

	admin := &http.Client{Timeout: 10 * time.Second}
	if a := call(t, admin, "PUT", base+"/admin/api/rooms/sale", token, `{"bot_protection": {"proof_of_work": "off"}}`); a.status/100 != 2 {
		t.Fatalf("put room: %d %v", a.status, a.body)
	}
	testkit.Until(t, 10*time.Second, "the server holds the room's lease", func() bool { return leases(t, base) == 1 })

	honest := from("127.0.0.2", false)
	served := func(what string) {
		t.Helper()
		start := time.Now()
		res, err := honest.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("%s: honest request: %v", what, err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || time.Since(start) > time.Second {
			t.Fatalf("%s: honest request answered %d in %v, want 200 within 1s", what, res.StatusCode, time.Since(start))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("one address holds its cap, another is served", func(t *testing.T) {
		actx, stop := context.WithCancel(ctx)
		defer stop()
		h := hold(actx, "127.0.0.5", p.addr, 100, slowBody, 50*time.Millisecond)
		testkit.Until(t, 10*time.Second, "the attacker holding 100", func() bool { return h.open.Load() == 100 })
		// Its 101st is answered 503 with Retry-After and the JSON error.
		res, err := from("127.0.0.5", false).Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code string } }
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || body.Error.Code != "too_many_connections" {
			t.Fatalf("the address's 101st connection: %d Retry-After %q %q", res.StatusCode, res.Header.Get("Retry-After"), body.Error.Code)
		}
		// An honest visitor from another address enters and is served.
		res, err = honest.Post(base+"/api/rooms/sale/enter", "application/json", nil)
		if err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("honest enter while one address holds its cap: %v %v", res, err)
		}
		res.Body.Close()
		for i := range 20 {
			served(fmt.Sprintf("request %d", i))
		}
	})

	t.Run("many addresses try more than the file limit", func(t *testing.T) {
		actx, stop := context.WithCancel(ctx)
		defer stop()
		var hs []*holder
		for i := range 12 {
			hs = append(hs, hold(actx, fmt.Sprintf("127.0.0.%d", 10+i), p.addr, 100, "", 500*time.Millisecond))
		}
		// Held for 8 s: past the 5 s header timeout, so every address
		// re-opens what the server closed. The server answers every honest
		// request, 200 or 503 with Retry-After, within a second, and keeps
		// its lease.
		deadline := time.Now().Add(8 * time.Second)
		var ok, refused, scraped int
		for time.Now().Before(deadline) {
			start := time.Now()
			res, err := honest.Get(base + "/readyz")
			if err != nil {
				t.Fatalf("honest request under a flood of connections: %v", err)
			}
			res.Body.Close()
			switch {
			case time.Since(start) > time.Second:
				t.Fatalf("honest request took %v", time.Since(start))
			case res.StatusCode == 200:
				ok++
			case res.StatusCode == 503 && res.Header.Get("Retry-After") != "":
				refused++
			default:
				t.Fatalf("honest request: %d", res.StatusCode)
			}
			switch n := leases(t, base); n {
			case -1:
			case 1:
				scraped++
			default:
				t.Fatalf("the server lost its room's lease under a flood of connections (%d leases)", n)
			}
			time.Sleep(100 * time.Millisecond) // a visitor's pace, not synchronisation
		}
		var held int64
		for _, h := range hs {
			held += h.open.Load()
		}
		t.Logf("12 addresses holding %d connections (refused ones close within a second); honest: %d served, %d refused with Retry-After; lease held at %d scrapes", held, ok, refused, scraped)
		if ok == 0 || scraped == 0 {
			t.Fatal("no honest request and no scrape served in 8 s of the flood: the oldest silent connections did not make room")
		}
		stop()
		for _, h := range hs {
			h.wg.Wait()
		}
		if n := leases(t, base); n != 1 {
			t.Fatalf("after the flood: %d leases", n)
		}
		// Once they let go, everyone is served again.
		testkit.Until(t, 10*time.Second, "honest requests served after the flood", func() bool {
			res, err := honest.Get(base + "/readyz")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == 200
		})
	})

	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		for _, bad := range []string{"too many open files", "another server took over", `"admission: lease"`, `"admission: tick"`} {
			if strings.Contains(l, bad) {
				t.Errorf("server log: %s", l)
			}
		}
	}
}
