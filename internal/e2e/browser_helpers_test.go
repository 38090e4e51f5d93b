package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// The browser tests drive headless Chromium (Debian's chromium package)
// through playwright-core from package.json, with scripts in web/e2e.

const (
	browserAdminToken = "browser-admin-token-0123456789"
	browserRoom       = "demo"
	// browserScenarioTimeout bounds one script, browser start included; the
	// script's own budget (TIMEOUT_MS) is shorter so it fails first, saying why.
	// The budget is for a hung script, not a speed target: a loaded CI
	// machine ran the six screenshots, 4 s alone here, in over 45 s (stop 31).
	browserScenarioTimeout = 105 * time.Second
	browserScriptBudget    = 90 * time.Second
)

// browserKit is what running a script needs: the repository's root and
// node (browsertest.Kit), and where screenshots go.
type browserKit struct {
	browsertest.Kit
	outDir string
}

// needBrowser finds chromium, node and playwright-core, or skips the test
// (browsertest.Need).
func needBrowser(t *testing.T) browserKit {
	t.Helper()
	kit := browsertest.Need(t, "../..") // go test runs in internal/e2e
	return browserKit{Kit: kit, outDir: filepath.Join(kit.Root, "test-output", "browser")}
}

// browserBlock says which push endpoints the fake proxy in front of the
// server refuses, as proxies that break WebSocket or streaming do.
type browserBlock struct{ ws, sse bool }

// browserSite is one real server on loopback: the line on the shared Redis,
// the real admission loop and push hub, the demo shop at /shop.
type browserSite struct {
	t     *testing.T
	url   string
	line  *queue.Line
	avail *queue.Availability // forced on and off by the degraded scenario
	ob    *outbox.Outbox
	// refused counts requests the fake proxy turned away, by "ws" and "sse".
	refusedWS, refusedSSE atomic.Int64
}

// browserJitter pins the jitter to two thirds of jitter_ms, so every run
// shows a countdown of the same length.
func browserJitter(max time.Duration) time.Duration { return max * 2 / 3 }

func startBrowserSite(t *testing.T, block browserBlock) *browserSite {
	t.Helper()
	return startBrowserSiteOn(t, block, redistest.Shared(t).Client(t), nil)
}

// startBrowserSiteOwnRedis runs the site on a redis-server of its own, with
// the availability probe running, so the test can kill Redis.
func startBrowserSiteOwnRedis(t *testing.T) (*browserSite, *redistest.Server) {
	t.Helper()
	rs := redistest.Start(t)
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{rs.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	return startBrowserSiteOn(t, browserBlock{}, rdb, rdb), rs
}

// startBrowserSiteOn starts the site on rdb; with probed set, the
// availability flag hears every call on it and probes it every 500 ms.
func startBrowserSiteOn(t *testing.T, block browserBlock, rdb, probed redis.UniversalClient) *browserSite {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(newBrowserLogWriter(t), &slog.HandlerOptions{Level: slog.LevelWarn}))
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil) // listens on 127.0.0.1
	base := "http://" + ts.Listener.Addr().String()
	keys.Issuer = base
	store := redisstore.New(rdb, redistest.Prefix(t))
	line := queue.NewLine(store, keys, queue.LineOptions{Logger: logger, Jitter: browserJitter})
	avail := queue.NewAvailability(nil, logger)
	if probed != nil {
		probed.AddHook(redisstore.Hook(avail))
	}
	broker, err := outbox.StartEmbedded(outbox.EmbeddedConfig{Topics: []string{outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.Open(outbox.Config{Dir: t.TempDir(), Brokers: broker.Addrs(), Logger: logger})
	if err != nil {
		broker.Close()
		t.Fatal(err)
	}
	srv := server.New(line, server.Config{AdminToken: browserAdminToken, Logger: logger, Avail: avail, Intents: ob})

	ctx, cancel := context.WithCancel(context.Background())
	sh, err := shop.Open(ctx, shop.Config{WaitroomURL: base, Room: browserRoom, Logger: logger}) // stock in memory
	if err != nil {
		cancel()
		ts.Close()
		t.Fatalf("shop: %v", err)
	}
	shopHandler := sh.Handler()
	for _, p := range shop.Paths {
		srv.MountHandler(shopHandler, p.Method, p.Path, p.Purpose)
	}

	site := &browserSite{t: t, url: base, line: line, avail: avail, ob: ob}
	ts.Config.Handler = site.proxy(srv, block)
	ts.Start()

	var wg sync.WaitGroup
	if probed != nil {
		wg.Add(1)
		go func() { defer wg.Done(); _ = avail.Run(ctx, store.Probe) }()
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		if err := ob.Run(ctx); err != nil {
			t.Errorf("outbox: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := queue.NewAdmitter(line).Run(ctx); err != nil {
			t.Errorf("admitter: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := srv.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("push hub: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		srv.Close() // push connections first: an open event stream would hold ts.Close
		wg.Wait()
		ts.Close()
		if err := sh.Close(); err != nil {
			t.Errorf("shop: close: %v", err)
		}
		_ = ob.Close()
		broker.Close()
	})
	return site
}

// proxy refuses the push endpoints block names with 403, like a proxy that
// does not pass WebSocket upgrades or event streams.
func (s *browserSite) proxy(next http.Handler, block browserBlock) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case block.ws && strings.HasPrefix(p, "/api/") && strings.HasSuffix(p, "/ws"):
			s.refusedWS.Add(1)
			http.Error(w, "WebSocket blocked by the test proxy", http.StatusForbidden)
		case block.sse && strings.HasPrefix(p, "/api/") && strings.HasSuffix(p, "/events"):
			s.refusedSSE.Add(1)
			http.Error(w, "event streams blocked by the test proxy", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// browserRoomSettings: a quick but real room. It starts paused, so the page
// settles on its transport before anyone moves; one admission every 500 ms,
// position pushes every 250 ms, and a 3 s jitter of which browserJitter
// takes 2 s.
func browserRoomSettings() queue.Settings {
	s := queue.DefaultSettings()
	s.Paused = true
	s.BatchSize = 1
	s.BatchIntervalMS = 500
	s.JitterMS = 3000
	s.AbandonAfterS = 300 // the waiters ahead have no page to keep them alive
	s.Tiers = []queue.Tier{{MaxPosition: nil, IntervalMS: 250}}
	s.TargetURL = "/shop"
	s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
	// Every visitor here comes from 127.0.0.1, and those entered through
	// the API never come to checkout: with a limit of unarrived slots per
	// network, the browser's visitor would wait on their arrival windows.
	s.BotProtection.UnarrivedPerNetwork = 0
	return s
}

func (s *browserSite) putRoom(settings queue.Settings) {
	s.t.Helper()
	if err := s.line.PutRoom(context.Background(), browserRoom, settings); err != nil {
		s.t.Fatalf("put room: %v", err)
	}
}

// enterOthers puts n waiters in line through the API, each a new visitor.
func (s *browserSite) enterOthers(n int) {
	s.t.Helper()
	for i := range n {
		res, err := http.Post(s.url+"/api/rooms/"+browserRoom+"/enter", "application/json", nil)
		if err != nil {
			s.t.Fatal(err)
		}
		var tk struct {
			State    string `json:"state"`
			Position int64  `json:"position"`
		}
		err = json.NewDecoder(res.Body).Decode(&tk)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || tk.State != "waiting" || tk.Position != int64(i+1) {
			s.t.Fatalf("enter waiter %d: %d %+v %v", i+1, res.StatusCode, tk, err)
		}
	}
}

// stats reads the room's counters through the admin API.
func (s *browserSite) stats() map[string]float64 {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.url+"/admin/api/rooms/"+browserRoom+"/stats", nil)
	req.Header.Set("Authorization", "Bearer "+browserAdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]float64{}
	var raw map[string]any
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil || res.StatusCode != http.StatusOK {
		s.t.Fatalf("stats: %d %v", res.StatusCode, err)
	}
	for k, v := range raw {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// browserScript is one running web/e2e script.
type browserScript struct {
	t      *testing.T
	name   string
	ready  chan json.RawMessage // READY lines, in order
	exited chan struct{}        // closed once the process is gone and its output read
	err    error                // the exit, once exited is closed
	mu     sync.Mutex
	res    json.RawMessage // the RESULT line
}

// startScript runs node web/e2e/<name>.mjs against site with env added,
// logging its output through t.Log. The process gets SIGTERM when ctx ends
// or the test does (playwright then closes the browser) and is killed 10 s
// later; the test does not end before it has.
func (k browserKit) startScript(ctx context.Context, t *testing.T, name string, site *browserSite, env ...string) *browserScript {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	sc := &browserScript{t: t, name: name, ready: make(chan json.RawMessage, 8), exited: make(chan struct{})}
	cmd := exec.CommandContext(ctx, k.Node, filepath.Join(k.Root, "web", "e2e", name+".mjs"))
	cmd.Dir = k.Root
	cmd.Env = append(os.Environ(),
		"BASE_URL="+site.url,
		"ROOM="+browserRoom,
		"OUT_DIR="+k.outDir,
		"SCENARIO="+strings.ReplaceAll(t.Name(), "/", "-"),
		fmt.Sprintf("TIMEOUT_MS=%d", browserScriptBudget.Milliseconds()),
	)
	cmd.Env = append(cmd.Env, k.Env(t)...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout = &lineWriter{line: sc.stdoutLine}
	cmd.Stderr = &lineWriter{line: func(l string) { t.Log(name + "! " + l) }}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc.err = cmd.Wait()
		close(sc.exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-sc.exited
	})
	return sc
}

func (sc *browserScript) stdoutLine(l string) {
	switch {
	case strings.HasPrefix(l, "READY "):
		sc.t.Log(sc.name + ": " + l)
		sc.ready <- json.RawMessage(strings.TrimPrefix(l, "READY "))
	case strings.HasPrefix(l, "RESULT "):
		sc.t.Logf("%s: RESULT (%d bytes)", sc.name, len(l))
		sc.mu.Lock()
		sc.res = json.RawMessage(strings.TrimPrefix(l, "RESULT "))
		sc.mu.Unlock()
	default:
		sc.t.Log(sc.name + ": " + l)
	}
}

// awaitReady waits for the script's next READY line into v; a script that
// ends first, or the deadline, fails the test.
func (sc *browserScript) awaitReady(ctx context.Context, v any) {
	sc.t.Helper()
	select {
	case raw := <-sc.ready:
		if err := json.Unmarshal(raw, v); err != nil {
			sc.t.Fatalf("%s: READY %s: %v", sc.name, raw, err)
		}
	case <-sc.exited:
		sc.t.Fatalf("%s ended before READY: %v", sc.name, sc.err)
	case <-ctx.Done():
		sc.t.Fatalf("%s: no READY: %v", sc.name, ctx.Err())
	}
}

// wait waits for the script to end well and decodes its RESULT into v.
func (sc *browserScript) wait(v any) {
	sc.t.Helper()
	<-sc.exited
	if sc.err != nil {
		sc.t.Fatalf("%s failed: %v (see its FAIL line above)", sc.name, sc.err)
	}
	sc.mu.Lock()
	raw := sc.res
	sc.mu.Unlock()
	if raw == nil {
		sc.t.Fatalf("%s printed no RESULT line", sc.name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		sc.t.Fatalf("%s: RESULT %s: %v", sc.name, raw, err)
	}
}

// lineWriter hands each complete line written to it to line; exec copies
// the child's output through it, and Wait returns once it is all copied.
type lineWriter struct {
	buf  bytes.Buffer
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		l := strings.TrimRight(string(w.buf.Next(i+1)), "\r\n")
		if l != "" {
			w.line(l)
		}
	}
}

// browserLogWriter sends the server's warnings to the test log, and drops
// them once the test is over (a background JWKS refresh may still log).
type browserLogWriter struct {
	t      *testing.T
	mu     sync.Mutex
	closed bool
}

func newBrowserLogWriter(t *testing.T) *browserLogWriter {
	w := &browserLogWriter{t: t}
	t.Cleanup(func() { // registered first, so it runs last
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
	})
	return w
}

func (w *browserLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log("server: " + strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

var _ io.Writer = (*browserLogWriter)(nil)
