package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/pow"
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestRunEmbeddedMode starts the whole program with nothing configured: an
// in-process Redis, a demo room, a generated signing key, and says so.
func TestRunEmbeddedMode(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", dir}, func(string) string { return "" }, logs,
			func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run ended early: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	// The demo room keeps the product default: a place costs a proof of work.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	var refused struct {
		Error     struct{ Code string }
		Challenge pow.Challenge
	}
	// A challenge is an HMAC, made when asked: the first ask gets one.
	res, err := c.Post("http://"+addr+"/api/rooms/demo/enter", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if err := json.Unmarshal(body, &refused); err != nil || res.StatusCode != 403 || refused.Error.Code != "challenge_required" {
		t.Fatalf("enter demo without work: %d %s", res.StatusCode, body)
	}
	solved, err := pow.Solve(ctx, refused.Challenge, 2)
	if err != nil {
		t.Fatal(err)
	}
	res, err = c.Post("http://"+addr+"/api/rooms/demo/enter", "application/json",
		strings.NewReader(`{"pow": "`+solved.Encode()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	var tk map[string]any
	if err := json.Unmarshal(body, &tk); err != nil || tk["room"] != "demo" {
		t.Fatalf("enter demo: %d %s", res.StatusCode, body)
	}
	res, err = http.Get("http://" + addr + "/metrics") // loopback is allowed by default
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(scrape), `waitroom_room_entered_total{room="demo"} 1`) ||
		!strings.Contains(string(scrape), `waitroom_build_info{goversion="go`) {
		t.Fatalf("metrics: %d\n%.2000s", res.StatusCode, scrape)
	}
	if _, err := os.Stat(filepath.Join(dir, "signing-key.pem")); err != nil {
		t.Fatalf("signing key not created: %v", err)
	}
	// The demo: its checkout at /shop (no ticket yet) and the demo room's
	// target_url pointing at it, named in the log as embedded mode's only.
	res, err = c.Get("http://" + addr + "/shop")
	if err != nil {
		t.Fatal(err)
	}
	shopPage, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(shopPage), `data-status="need_ticket"`) {
		t.Fatalf("demo shop: %d %.500s", res.StatusCode, shopPage)
	}
	for _, want := range []string{"EMBEDDED MODE", "in memory", "admin_token=", "demo shop on /shop: embedded mode only"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, logs)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop on cancel")
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	err := run(context.Background(), []string{"--addr", "x"}, func(string) string { return "" }, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "--addr") {
		t.Fatalf("run with a bad addr: %v", err)
	}
}

// TestRunWithGate: with --upstream the gate stands in front of checkout;
// waitroom's own pages still answer, unprotected paths pass, and a protected
// path without a token never reaches the upstream.
func TestRunWithGate(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "upstream "+r.URL.Path)
	}))
	defer up.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--upstream", up.URL,
			"--protect", "/checkout/*", "--gate-room", "demo"}, func(string) string { return "" }, io.Discard,
			func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	get := func(path, accept string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		req.Header.Set("Accept", accept)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/about", "text/html"); code != 200 || body != "upstream /about" {
		t.Fatalf("unprotected path: %d %q", code, body)
	}
	if code, _ := get("/healthz", "application/json"); code != 200 {
		t.Fatalf("waitroom's own path: %d", code)
	}
	before := hits.Load()
	if code, _ := get("/checkout/pay", "text/html"); code != http.StatusFound {
		t.Fatalf("browser without a token: %d, want a redirect to the line", code)
	}
	// The demo room asks for proof of work: an API client without a place
	// gets a challenge (once the pool made the first: 503 until then).
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		code, body := get("/checkout/pay", "application/json")
		if code == http.StatusServiceUnavailable && time.Since(start) < 10*time.Second {
			continue
		}
		if code != http.StatusForbidden || !strings.Contains(body, `"challenge_required"`) || !strings.Contains(body, `"challenge"`) {
			t.Fatalf("API client without a token: %d %s, want 403 challenge_required with a challenge", code, body)
		}
		break
	}
	if hits.Load() != before {
		t.Fatal("a request without a valid token reached the upstream")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunRefusesRealRedisWithoutSigningKey: with a real Redis, a missing
// key file stops the start (a server must not make up a key of its own that
// the other servers do not know), and --create-signing-key makes one.
func TestRunRefusesRealRedisWithoutSigningKey(t *testing.T) {
	rs := redistest.Start(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "keys", "signing-key.pem")
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--redis-url", rs.URL(), "--signing-key", key,
		"--kafka-brokers", "embedded", "--admin-token", "7d2f9a41c6e08b3f5a9d1e7c40b2f86a", "--embed-demo-addr", "off"}
	err := run(context.Background(), args, env(), io.Discard, func(string) { t.Error("started without a signing key") })
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "--create-signing-key") {
		t.Fatalf("start without a key file: %v", err)
	}
	if _, err := os.Stat(key); !os.IsNotExist(err) {
		t.Fatalf("a key file was created: %v", err)
	}
	if err := run(context.Background(), []string{"--create-signing-key", "--signing-key", key}, env(), io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	// Asked again, it keeps the key every server already has.
	if err := run(context.Background(), []string{"--create-signing-key", "--signing-key", key}, env(), io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(key); string(again) != string(first) {
		t.Fatal("--create-signing-key replaced an existing key")
	}
}

func TestRunVersion(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"--version"}, env(), &out, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "waitroom ") || len(strings.Fields(out.String())) < 2 {
		t.Fatalf("--version printed %q", out.String())
	}
	version = "v9.9.9"
	defer func() { version = "" }()
	if v, _ := buildVersion(); v != "v9.9.9" {
		t.Fatalf("the -ldflags version is ignored: %s", v)
	}
}
