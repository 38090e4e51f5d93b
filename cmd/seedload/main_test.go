package main

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseRefusesNonLoopbackAndUnbounded(t *testing.T) {
	for _, args := range [][]string{
		{"herd", "--admin-token", "x", "--url", "http://10.0.0.1:8080"},
		{"herd", "--admin-token", "x", "--url", "http://localhost:8080"}, // a name could resolve elsewhere later
		{"herd", "--admin-token", "x", "--url", "https://127.0.0.1:8080"},
		{"herd", "--admin-token", "x", "--checkout-addr", "0.0.0.0:9000"},
		{"herd", "--admin-token", "x", "--visitors", "1000000"},
		{"herd", "--admin-token", "x", "--a-interval", "10ms"},
		{"herd", "--url", "http://127.0.0.1:8080"}, // no admin token
		{"polling", "--admin-token", "x", "--access-log", "l", "--redis-addr", "192.168.1.1:6379"},
		{"polling", "--admin-token", "x", "--access-log", "l", "--window", "1h"},
		{"polling", "--admin-token", "x", "--access-log", "l", "--modes", "flat5,carrier-pigeon"},
		{"polling", "--admin-token", "x"}, // no access log: nothing counted at the server
		{"stampede"},
	} {
		if err := runMain(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("runMain(%q) = nil error", args)
		}
	}
	c, err := parsePolling([]string{"--admin-token", "x", "--access-log", "l", "--url", "http://127.0.0.1:9/", "--modes", "tiered,push"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "http://127.0.0.1:9" || len(c.Modes) != 2 || c.Modes[1] != modePush {
		t.Errorf("config = %+v", c)
	}
}

// The seed's own arithmetic at 5,000 waiters: flat 5 s is 1,000 requests a
// second, its tiers 580.
func TestExpectedRateIsTheSeeds(t *testing.T) {
	pos := make([]int64, 5000)
	for i := range pos {
		pos[i] = int64(i + 1)
	}
	for mode, want := range map[string]float64{modeFlat5: 1000, modeFlat1: 5000, modeTiered: 580, modePush: 580} {
		if got := expectedRate(mode, pos); got < want-0.01 || got > want+0.01 {
			t.Errorf("expectedRate(%s) = %.2f, want %.0f", mode, got, want)
		}
	}
	if got := expectedRate(modeTiered, pos[:1000]); got < 179.99 || got > 180.01 {
		t.Errorf("tiered at 1,000 waiters = %.2f, want the seed's 180", got)
	}
}

// The checkout takes as many orders at once as it has workers; the rest
// wait their turn, so a burst's last order waits for the ones before it.
func TestCheckoutQueuesBeyondItsWorkers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const service = 200 * time.Millisecond // long enough that six requests sent at once overlap
	co := newCheckout(ctx, 2, 10, service)
	srv := httptest.NewServer(co)
	defer srv.Close()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(srv.URL+"/checkout/order", "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	s := co.take()
	if s.Latency.N != 6 {
		t.Fatalf("orders = %d, want 6", s.Latency.N)
	}
	// Six orders on two workers: three rounds, so the slowest waited about
	// two services before its own; without a queue it would take one. The
	// bound is two services: timer rounding can shave a millisecond off three.
	if s.Latency.Max < msOf(2*service) {
		t.Errorf("slowest order %.1f ms, want more than two services (%.0f ms): orders did not queue", s.Latency.Max, msOf(2*service))
	}
	if s.PeakInFlight < 3 {
		t.Errorf("peak in flight %d, want more than the 2 workers", s.PeakInFlight)
	}
	if again := co.take(); again.Latency.N != 0 || again.PeakInFlight != 0 {
		t.Errorf("take did not start afresh: %+v", again)
	}
}

// Beyond its queue the checkout refuses at once rather than holding orders
// without bound.
func TestCheckoutRefusesBeyondItsQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	co := newCheckout(ctx, 1, 0, 2*time.Second)
	srv := httptest.NewServer(co)
	defer srv.Close()
	// Occupy the one worker: with no queue, the send returns only once the
	// worker has taken the job.
	busy := make(chan struct{})
	co.jobs <- busy
	start := time.Now()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503 while the worker is busy", resp.StatusCode)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("refusal took %s: it waited for the worker", d)
	}
	<-busy
	if s := co.take(); s.Refused != 1 || s.Latency.N != 0 {
		t.Errorf("stats = %+v, want one refused and no order", s)
	}
}

func TestParseAccessLine(t *testing.T) {
	for line, want := range map[string]accessLine{
		`time=2026-12-01T05:24:41.547Z level=INFO msg=request request_id=abc method=GET path=/api/rooms/r/tickets/t status=200 bytes=210 duration_ms=0.9 client=127.0.0.1`: {"GET", "/api/rooms/r/tickets/t", 200, "2026-12-01T05:24:41"},
		`time=x level=INFO msg=request method=POST path="/api/rooms/r/a b" status=429`:                                                                                     {"POST", "/api/rooms/r/a b", 429, ""},
	} {
		got, ok := parseAccessLine(line)
		if !ok || got != want {
			t.Errorf("parseAccessLine(%q) = %+v, %v; want %+v", line, got, ok, want)
		}
	}
	for _, line := range []string{
		`time=x level=WARN msg="redis slow" method=GET path=/x status=200`, // not an access line
		`time=x level=INFO msg=request method=GET path=/x`,                 // no status
		`time=x level=INFO msg=request method=GET path="/x status=200`,     // unterminated quote
		`garbage`,
		``,
	} {
		if got, ok := parseAccessLine(line); ok {
			t.Errorf("parseAccessLine(%q) = %+v, true", line, got)
		}
	}
}

func FuzzParseAccessLine(f *testing.F) {
	f.Add(`time=2026-12-01T05:24:41.547Z level=INFO msg=request request_id=abc method=GET path=/api/rooms/r/tickets/t status=200 bytes=210`)
	f.Add(`msg="request" method="GET" path="/a\"b" status=1`)
	f.Add(`msg=request method= path== status==`)
	f.Add(`="=`)
	f.Fuzz(func(t *testing.T, line string) {
		a, ok := parseAccessLine(line)
		if ok && (a.method == "" || a.path == "" || a.status <= 0) {
			t.Errorf("accepted %q as %+v", line, a)
		}
	})
}

// Requests are counted from the log between two offsets, by kind, only for
// the room asked about; a line cut by the first offset is not counted.
func TestCountAccess(t *testing.T) {
	line := func(sec, method, path string) string {
		return "time=2026-12-01T05:24:" + sec + ".123Z level=INFO msg=request request_id=i method=" + method + " path=" + path + " status=200 bytes=1\n"
	}
	before := line("40", "GET", "/api/rooms/r/tickets/early")
	body := line("41", "GET", "/api/rooms/r/tickets/a") +
		line("41", "GET", "/api/rooms/r/tickets/b") +
		line("41", "POST", "/api/rooms/r/enter") +
		line("42", "GET", "/api/rooms/r/tickets/c/ws") +
		line("42", "DELETE", "/api/rooms/r/tickets/c") +
		line("42", "GET", "/api/rooms/other/tickets/x") +
		"time=t level=WARN msg=\"something\"\n"
	path := filepath.Join(t.TempDir(), "waitroom.log")
	if err := os.WriteFile(path, []byte(before+body), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := countAccess(path, int64(len(before)), int64(len(before+body)), "/api/rooms/r/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"status": 2, "enter": 1, "ws": 1, "other": 1}
	if !maps.Equal(got.ByKind, want) {
		t.Errorf("counts = %v, want %v", got.ByKind, want)
	}
	if got.ByStatus["200"] != 5 || got.total() != 5 {
		t.Errorf("by status = %v, total %d; want 5 200s", got.ByStatus, got.total())
	}
	// Two seconds: three requests in the first, two in the second.
	if !slices.Equal(got.PerSecond, []int{2, 3}) {
		t.Errorf("per second = %v, want [2 3]", got.PerSecond)
	}
	// From the middle of the first line: that line is not counted.
	got, err = countAccess(path, 10, int64(len(before+body)), "/api/rooms/r/")
	if err != nil {
		t.Fatal(err)
	}
	if got.ByKind["status"] != 2 {
		t.Errorf("from a cut line: status = %d, want 2", got.ByKind["status"])
	}
}

func TestSummarizeNearestRank(t *testing.T) {
	var ms []float64
	for i := 1; i <= 100; i++ {
		ms = append(ms, float64(i))
	}
	d := summarize(ms)
	if d.N != 100 || d.P50 != 50 || d.P95 != 95 || d.P99 != 99 || d.Max != 100 {
		t.Errorf("summarize = %+v", d)
	}
	if summarize(nil) != (dist{}) {
		t.Error("empty: want zero")
	}
}
