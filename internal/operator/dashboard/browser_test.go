package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/templates"
)

// The dashboard in headless Chromium (Debian's chromium) through
// playwright-core from package.json, running testdata/admin.mjs. Without
// chromium, node or node_modules it skips, unless WAITROOM_REQUIRE_BROWSER=1.

const (
	// browserTimeout bounds the script, browser start included; its own
	// budget is shorter so it fails first, saying why.
	// Generous: on the shared 2-core machine at load 30 the layout
	// script's twelve pages took over 90 s.
	browserTimeout = 300 * time.Second
	scriptBudget   = 240 * time.Second
)

// needBrowser finds chromium, node and playwright-core, or skips the test
// (browsertest.Need).
func needBrowser(t *testing.T) browsertest.Kit {
	t.Helper()
	return browsertest.Need(t, "../../..") // go test runs in internal/operator/dashboard
}

// adminRun is what admin.mjs saw.
type adminRun struct {
	LoginError, TypingError, SubmitError string
	SubmitStatusPath                     string
	SessionCookie                        *struct {
		HTTPOnly bool   `json:"httpOnly"`
		SameSite string `json:"sameSite"`
		Path     string `json:"path"`
	}
	LiveText                 string
	WaitingSeen, EntriesSeen float64
	RatesBefore, RatesAfter  []float64
	FollowMS                 int64 `json:"followMs"`
	ControlStatus            string
	CSRF                     []struct {
		Header *string
		Status int
		Body   struct{ Error struct{ Code string } }
	}
	StateAfterCSRF                  string
	TierRowsAtStart                 int
	ChartPoints, Canvases           int
	SameDocument                    bool
	Modes                           []string
	WaitingValues                   []float64
	KoHeading, KoLive, KoRowState   string
	KoTierLabel                     string
	PageErrors, Foreign, HTTPErrors []string
}

func TestDashboardInChromium(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	root, node := kit.Root, kit.Node
	site := newSite(t, siteOptions{admit: true})
	const room = "flash"
	outDir := filepath.Join(root, "test-output", "browser")

	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "admin.mjs"))
	cmd.Dir = "." // node finds playwright-core in the repository's node_modules, up the tree
	cmd.Env = append(os.Environ(),
		"BASE_URL="+site.url, "ADMIN_TOKEN="+adminToken, "ROOM="+room, "OUT_DIR="+outDir,
		fmt.Sprintf("TIMEOUT_MS=%d", scriptBudget.Milliseconds()),
	)
	cmd.Env = append(cmd.Env, kit.Env(t)...)
	var result []byte
	ready := make(chan struct{}, 1)
	cmd.Stdout = &lineWriter{line: func(l string) {
		switch {
		case strings.HasPrefix(l, "READY "):
			t.Log("admin.mjs: " + l)
			ready <- struct{}{}
		case strings.HasPrefix(l, "RESULT "):
			result = []byte(strings.TrimPrefix(l, "RESULT "))
		default:
			t.Log("admin.mjs: " + l)
		}
	}}
	cmd.Stderr = &lineWriter{line: func(l string) { t.Log("admin.mjs! " + l) }}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Simulated visitors once the room page is live: a burst, then ten a
	// second until the script is done (bounded either way).
	visitors, stopVisitors := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopVisitors(); wg.Wait() }()
	var err error
	select {
	case <-ready:
	case err = <-exited:
		t.Fatalf("admin.mjs ended before READY: %v", err)
	}
	entered := make(chan int, 1)
	wg.Go(func() {
		n := 0
		defer func() { entered <- n }()
		enter := func() bool {
			_, _, err := site.line.Enter(visitors, room, fmt.Sprintf("sim-%d", n))
			if err != nil {
				if visitors.Err() == nil {
					t.Errorf("enter: %v", err)
				}
				return false
			}
			n++
			return true
		}
		for range 150 {
			if !enter() {
				return
			}
		}
		pace := time.NewTicker(100 * time.Millisecond) // the visitors' pace, not a synchronisation
		defer pace.Stop()
		for n < 1200 {
			select {
			case <-visitors.Done():
				return
			case <-pace.C:
				if !enter() {
					return
				}
			}
		}
	})
	err = <-exited
	stopVisitors()
	t.Logf("%d simulated visitors entered", <-entered)
	if err != nil {
		t.Fatalf("admin.mjs failed: %v (see its FAIL line above)", err)
	}
	var v adminRun
	if err := json.Unmarshal(result, &v); err != nil {
		t.Fatalf("RESULT %s: %v", result, err)
	}
	t.Logf("admitted/s before the change %.1f; after it, steady from %d ms: %.1f; waiting values seen %v", v.RatesBefore, v.FollowMS, v.RatesAfter, v.WaitingValues)

	en := func(k string) string { return templates.T(templates.English, k) }
	ko := func(k string) string { return templates.T(templates.Korean, k) }
	if v.LoginError != en("admin.login.wrong") {
		t.Errorf("wrong token said %q", v.LoginError)
	}
	if c := v.SessionCookie; c == nil || !c.HTTPOnly || c.SameSite != "Strict" || c.Path != "/admin" {
		t.Errorf("session cookie %+v", c)
	}
	capMsg := saidIn(t, templates.English, `{"capacity": 0}`)
	if v.TypingError != capMsg || v.SubmitError != capMsg || v.SubmitStatusPath != "/admin/create" {
		t.Errorf("capacity 0: while typing %q, on submit %q at %s; want %q", v.TypingError, v.SubmitError, v.SubmitStatusPath, capMsg)
	}
	s := site.getRoom(room)
	if s.Title.String() != "Flash sale" || s.Capacity != 1000 || s.BatchSize != 5 || s.BatchIntervalMS != 500 || s.AbandonAfterS != 600 {
		t.Errorf("room as stored at the end %+v", s)
	}
	end := time.Date(2031, 2, 3, 4, 5, 0, 0, time.UTC)
	tiers, _ := json.Marshal(s.Tiers)
	if v.TierRowsAtStart != 3 || string(tiers) != `[{"max_position":500,"interval_ms":5000},{"max_position":2000,"interval_ms":4000},{"max_position":null,"interval_ms":10000}]` ||
		s.EndsAt == nil || !s.EndsAt.Equal(end) {
		t.Errorf("structured inputs: %d rows at the start; stored tiers %s, ends_at %v", v.TierRowsAtStart, tiers, s.EndsAt)
	}
	if v.LiveText != en("admin.conn.ws") || !v.SameDocument || len(v.WaitingValues) < 3 {
		t.Errorf("live %q, one document %v, waiting values %v: want the counts to move live over WebSocket", v.LiveText, v.SameDocument, v.WaitingValues)
	}
	if v.WaitingSeen < 30 || v.EntriesSeen <= 0 {
		t.Errorf("waiting %v, entries/s %v", v.WaitingSeen, v.EntriesSeen)
	}
	// The script waited for each rate to hold longer than the rate window.
	if len(v.RatesBefore) < 2 || len(v.RatesAfter) < 2 || v.ControlStatus != en("admin.control.saved") {
		t.Errorf("admitted rates %v then %v (%q): want about 2/s, then about 10/s, each held", v.RatesBefore, v.RatesAfter, v.ControlStatus)
	}
	if len(v.CSRF) != 2 {
		t.Fatalf("CSRF probes %+v", v.CSRF)
	}
	for _, p := range v.CSRF {
		if p.Status != 403 || p.Body.Error.Code != "csrf" {
			t.Errorf("post with CSRF header %v: %d %+v", p.Header, p.Status, p.Body)
		}
	}
	if s.Paused || v.StateAfterCSRF != en("admin.state.running") {
		t.Errorf("after the refused posts: paused %v, page says %q", s.Paused, v.StateAfterCSRF)
	}
	if v.ChartPoints < 20 || v.Canvases != 4 {
		t.Errorf("charts: %d points, %d canvases", v.ChartPoints, v.Canvases)
	}
	if v.KoHeading != "“"+room+"” 대기실" || v.KoLive != ko("admin.conn.ws") || v.KoRowState != ko("admin.state.running") {
		t.Errorf("Korean: %q, %q, %q", v.KoHeading, v.KoLive, v.KoRowState)
	}
	if v.KoTierLabel != ko("admin.field.tiers") {
		t.Errorf("Korean form: tiers labelled %q", v.KoTierLabel)
	}
	if len(v.PageErrors) > 0 || len(v.Foreign) > 0 {
		t.Errorf("page errors %q, requests off loopback %q", v.PageErrors, v.Foreign)
	}
	for _, e := range v.HTTPErrors {
		// Expected: the wrong token (401), the bad capacity (400), the two CSRF probes (403).
		switch e {
		case "401 POST /admin/login", "400 POST /admin/create", "403 POST /admin/rooms/" + room + "/controls":
		default:
			t.Errorf("the browser got %s", e)
		}
	}
	for _, f := range []string{"admin-form-en.png", "admin-form-ko.png", "admin-room-en.png", "admin-room-ko.png", "admin-rooms-ko.png"} {
		checkPNG(t, filepath.Join(outDir, f), 1280)
	}
}

func checkPNG(t *testing.T, file string, width int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != width || cfg.Height < 400 {
		t.Errorf("%s: %dx%d %v: want a PNG %d px wide", file, cfg.Width, cfg.Height, err, width)
	}
}

// lineWriter hands each complete line written to it to line.
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
		if l := strings.TrimRight(string(w.buf.Next(i+1)), "\r\n"); l != "" {
			w.line(l)
		}
	}
}
