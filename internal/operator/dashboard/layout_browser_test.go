package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// layoutRun is what admin_layout.mjs saw on each page.
type layoutRun struct {
	Results []struct {
		Page, Lang, Viewport, File string
		Width                      int
		Violations                 []struct {
			ID, Impact string
			Nodes      []string
		}
		Broken    []string
		FullState string
		Title     string
		State     string
		Legend    []struct {
			Chart                string
			Labels, Values, Axis []string
		}
		LiveHeading, LiveStatus string
	}
	PageErrors []string
}

// TestDashboardLayoutInChromium: the rooms list, a room at 100/100 and its
// form, at 390 and 1280 px in English and Korean: no word broken inside to
// fit, the full room said to be full, legends with the latest values (not
// uPlot's "--" until hovered), axes with units, one "Live" in the header,
// and no axe-core violations. Screenshots go to test-output/browser.
func TestDashboardLayoutInChromium(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	root, node := kit.Root, kit.Node
	site := newSite(t, siteOptions{admit: true})
	const room = "spring-sneaker-drop"
	s := queue.DefaultSettings()
	s.Capacity, s.BatchSize, s.SessionTTLS, s.AbandonAfterS = 100, 50, 3600, 3600
	s.Title = queue.TextByLang(map[string]string{"en": "Limited spring sneaker drop, sizes 38 to 46", "ko": "봄 한정판 스니커즈 드롭"})
	site.putRoom(room, s)
	other := queue.DefaultSettings()
	other.Title = queue.Text("Admitting room")
	site.putRoom("a-room-with-a-rather-long-name", other)
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	for i := range 130 {
		if _, _, err := site.line.Enter(ctx, room, fmt.Sprintf("v-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The admitter fills the room; no signal says when, so look until it has.
	for {
		st, err := site.line.Stats(ctx, room, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if st.Active >= 100 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the room never filled: %+v", st)
		case <-time.After(50 * time.Millisecond):
		}
	}

	outDir := filepath.Join(root, "test-output", "browser")
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "admin_layout.mjs"))
	cmd.Env = append(os.Environ(), "BASE_URL="+site.url, "ADMIN_TOKEN="+adminToken, "ROOM="+room, "OUT_DIR="+outDir,
		fmt.Sprintf("TIMEOUT_MS=%d", scriptBudget.Milliseconds()))
	cmd.Env = append(cmd.Env, kit.Env(t)...)
	var result []byte
	cmd.Stdout = &lineWriter{line: func(l string) {
		if r, ok := strings.CutPrefix(l, "RESULT "); ok {
			result = []byte(r)
			return
		}
		t.Log("admin_layout.mjs: " + l)
	}}
	cmd.Stderr = &lineWriter{line: func(l string) { t.Log("admin_layout.mjs! " + l) }}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	// Newcomers join the full room while the script looks, so the live
	// list has changes to push (bounded either way).
	joining, stopJoining := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopJoining(); wg.Wait() }()
	wg.Go(func() {
		pace := time.NewTicker(100 * time.Millisecond) // the visitors' pace, not a synchronisation
		defer pace.Stop()
		for i := range 1000 {
			select {
			case <-joining.Done():
				return
			case <-pace.C:
			}
			if _, _, err := site.line.Enter(joining, room, fmt.Sprintf("late-%d", i)); err != nil && joining.Err() == nil {
				t.Errorf("enter: %v", err)
				return
			}
		}
	})
	if err := cmd.Run(); err != nil {
		t.Fatalf("admin_layout.mjs failed: %v (see its FAIL line above)", err)
	}
	var v layoutRun
	if err := json.Unmarshal(result, &v); err != nil {
		t.Fatalf("RESULT %s: %v", result, err)
	}
	if len(v.Results) != 12 || len(v.PageErrors) > 0 {
		t.Fatalf("%d pages seen, page errors %q", len(v.Results), v.PageErrors)
	}
	number := regexp.MustCompile(`\d`)
	units := map[string]string{"counts": "admin.axis.people", "rates": "admin.axis.per_s", "eta": "admin.axis.minutes", "lapsed": "admin.axis.per_min"}
	for _, r := range v.Results {
		at := r.Page + "-" + r.Lang + "-" + r.Viewport
		lang := templates.Lang(r.Lang)
		full := templates.T(lang, "admin.state.full")
		if len(r.Violations) > 0 {
			t.Errorf("%s: axe-core found %+v", at, r.Violations)
		}
		if len(r.Broken) > 0 {
			t.Errorf("%s: words broken inside: %q", at, r.Broken)
		}
		checkPNG(t, r.File, r.Width)
		switch r.Page {
		case "rooms":
			if want := s.Title.In(r.Lang); r.Title != want {
				t.Errorf("%s: the title in the live list is %q, want %q", at, r.Title, want)
			}
			if r.FullState != full {
				t.Errorf("%s: the room at 100/100 says %q, want %q", at, r.FullState, full)
			}
		case "room":
			if r.State != full {
				t.Errorf("%s: state %q, want %q", at, r.State, full)
			}
			if r.LiveHeading == r.LiveStatus || r.LiveStatus != templates.T(lang, "admin.conn.ws") {
				t.Errorf("%s: heading %q next to status %q", at, r.LiveHeading, r.LiveStatus)
			}
			if len(r.Legend) != 4 {
				t.Fatalf("%s: legends %+v", at, r.Legend)
			}
			for _, l := range r.Legend {
				if len(l.Labels) == 0 || l.Labels[0] != templates.T(lang, "admin.chart.time") {
					t.Errorf("%s %s: legend labels %q", at, l.Chart, l.Labels)
				}
				if !strings.Contains(strings.Join(l.Axis, " "), templates.T(lang, units[l.Chart])) {
					t.Errorf("%s %s: axis labels %q, want the unit %q", at, l.Chart, l.Axis, templates.T(lang, units[l.Chart]))
				}
				for i, val := range l.Values {
					if val == "" || val == "--" || l.Chart == "counts" && !number.MatchString(val) {
						t.Errorf("%s %s: legend value %d is %q (all %q)", at, l.Chart, i, val, l.Values)
					}
				}
			}
		}
	}
}
