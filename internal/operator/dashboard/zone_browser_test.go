package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestDashboardTimesInOperatorZone: with Chromium's zone set to Asia/Seoul
// (UTC+9, so no time reads the same as in UTC), every time the room page
// and the sale report print (the opening and its draw, the charts' range,
// the report's span and peak) is in Seoul's time, with no "UTC", and the
// UTC text on hover; the whole sale (40 seeded minutes), chosen from the
// range links, fills the charts, whose latest time is Seoul's; the CSV and
// JSON exports stay in UTC; the room form's date field, in UTC, is echoed
// in Seoul's time. English and Korean at 390 and 1280 px,
// axe-clean, screenshots in test-output/browser/admin-zone-*.png.
func TestDashboardTimesInOperatorZone(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	root, node := kit.Root, kit.Node
	const zone = "Asia/Seoul"
	seoul, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	site := newSite(t, siteOptions{admit: true, history: true})
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()

	opens := time.Now().Add(time.Hour).Truncate(time.Second)
	sched := queue.DefaultSettings()
	sched.OpensAt = &opens
	site.putRoom("zone-drawn", sched)
	for i := range 3 {
		if _, _, err := site.line.Enter(ctx, "zone-drawn", fmt.Sprintf("early-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := site.line.OpenNow(ctx, "zone-drawn"); err != nil {
		t.Fatal(err)
	}
	// The admitter draws at its next tick; no signal says when, so look.
	for {
		_, ok, err := site.line.LastDraw(ctx, "zone-drawn")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the pre-queue was never drawn")
		case <-time.After(50 * time.Millisecond):
		}
	}
	site.putRoom("zone-sale", queue.DefaultSettings())
	const saleMinutes = 40
	saleStart := seedSale(t, site, "zone-sale", saleMinutes)

	rooms, _ := json.Marshal(map[string]string{"drawn": "zone-drawn", "sale": "zone-sale"})
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "admin_zone.mjs"))
	cmd.Env = append(os.Environ(), "BASE_URL="+site.url, "ADMIN_TOKEN="+adminToken, "ROOMS="+string(rooms), "TIMEZONE="+zone,
		"OUT_DIR="+filepath.Join(root, "test-output", "browser"),
		fmt.Sprintf("TIMEOUT_MS=%d", scriptBudget.Milliseconds()))
	cmd.Env = append(cmd.Env, kit.Env(t)...)
	var result []byte
	cmd.Stdout = &lineWriter{line: func(l string) {
		if r, ok := strings.CutPrefix(l, "RESULT "); ok {
			result = []byte(r)
			return
		}
		t.Log("admin_zone.mjs: " + l)
	}}
	cmd.Stderr = &lineWriter{line: func(l string) { t.Log("admin_zone.mjs! " + l) }}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("admin_zone.mjs failed: %v (see its FAIL line above)", err)
	}
	var v struct {
		Results []struct {
			View, Lang, Viewport, File string
			Width                      int
			Violations                 []struct {
				ID, Impact string
				Nodes      []string
			}
		}
		PageErrors []string
		Seen       []struct {
			Lang, Viewport, Zone string
			Times                []struct{ At, Datetime, Text, Title string }
			Sale                 struct {
				Points  int
				LastT   int64
				Legend  string
				Current string
			}
			Field                           struct{ Value, Echo string }
			Ticks                           struct{ Live, Sale []string }
			CSVMinute, JSONFrom, JSONMinute string
		}
	}
	if err := json.Unmarshal(result, &v); err != nil {
		t.Fatalf("RESULT %s: %v", result, err)
	}
	if len(v.Results) != 4*4 || len(v.Seen) != 4 || len(v.PageErrors) > 0 {
		t.Fatalf("%d views and %d runs seen, want 16 and 4; page errors %q", len(v.Results), len(v.Seen), v.PageErrors)
	}
	for _, r := range v.Results {
		if len(r.Violations) > 0 {
			t.Errorf("%s-%s-%s: axe-core found %+v", r.View, r.Lang, r.Viewport, r.Violations)
		}
		checkPNG(t, r.File, r.Width)
	}
	// ICU writes a narrow no-break space before "PM".
	plain := strings.NewReplacer("\u202f", " ", "\u00a0", " ").Replace
	// local is how a moment reads in Seoul in lang: its date, and its time to the minute.
	local := func(lang string, at time.Time) (date, clock string) {
		at = at.In(seoul)
		if lang == "ko" {
			half := "오전"
			if at.Hour() >= 12 {
				half = "오후"
			}
			return fmt.Sprintf("%d. %d. %d.", at.Year(), at.Month(), at.Day()), half + " " + at.Format("3:04")
		}
		return at.Format("Jan 2, 2006"), at.Format("3:04 PM")
	}
	for _, s := range v.Seen {
		at := s.Lang + "-" + s.Viewport
		if s.Zone != zone {
			t.Errorf("%s: the browser's zone is %q", at, s.Zone)
		}
		t.Logf("%s: %d times, e.g. %+v; charts %+v; CSV from %s", at, len(s.Times), s.Times[0], s.Sale, s.CSVMinute)
		// Two of the opening, two of the charts' range, three of the report.
		byPlace := map[string]int{}
		for _, tm := range s.Times {
			byPlace[tm.At]++
			when, err := time.Parse(time.RFC3339, tm.Datetime)
			if err != nil {
				t.Errorf("%s: %s: datetime %q: %v", at, tm.At, tm.Datetime, err)
				continue
			}
			date, clock := local(s.Lang, when)
			text := plain(tm.Text)
			utc := when.UTC().Format("2006-01-02 15:04")
			if !strings.Contains(text, date) || !strings.Contains(text, clock) || strings.Contains(text, "UTC") ||
				!strings.HasPrefix(tm.Title, utc) || !strings.HasSuffix(tm.Title, " UTC") {
				t.Errorf("%s: %s at %s reads %q (want %q, %q), on hover %q (want %s… UTC)", at, tm.At, tm.Datetime, tm.Text, date, clock, tm.Title, utc)
			}
		}
		if byPlace["opening-at"] != 1 || byPlace["opening-draw"] != 1 || byPlace["charts-heading"] != 2 || len(s.Times) != 7 {
			t.Errorf("%s: times found %v (%d in all), want the opening, its draw, the charts' range and the report's three", at, byPlace, len(s.Times))
		}
		// The whole sale in the charts, its latest minute in Seoul's time.
		clock := time.UnixMilli(s.Sale.LastT).In(seoul).Format("3:04") // the legend has the seconds too
		if s.Sale.Points < saleMinutes || s.Sale.Current != "range-sale" || !strings.Contains(plain(s.Sale.Legend), clock) {
			t.Errorf("%s: whole sale: %+v, want ≥ %d points, the legend at %q", at, s.Sale, saleMinutes, clock)
		}
		// The form's date field is UTC; under it, the same moment in Seoul.
		opensAt := ""
		for _, tm := range s.Times {
			if tm.At == "opening-at" {
				opensAt = tm.Datetime // "open now" moved it to the moment of the draw
			}
		}
		if field, err := time.ParseInLocation("2006-01-02T15:04:05", s.Field.Value, time.UTC); err != nil || field.Format(time.RFC3339) != opensAt {
			t.Errorf("%s: the form's opens_at is %q (%v), want %s in UTC", at, s.Field.Value, err, opensAt)
		} else if date, clock := local(s.Lang, field); !strings.Contains(plain(s.Field.Echo), date) || !strings.Contains(plain(s.Field.Echo), clock) ||
			!strings.HasPrefix(s.Field.Echo, strings.Split(templates.T(templates.Lang(s.Lang), "admin.field.local_time"), "{")[0]) {
			t.Errorf("%s: under opens_at %q: %q, want %q and %q", at, s.Field.Value, s.Field.Echo, date, clock)
		}
		// The charts' time axis: no label twice, in the live chart's first
		// minute (ticks seconds apart) as over the whole sale.
		for name, ticks := range map[string][]string{"live": s.Ticks.Live, "sale": s.Ticks.Sale} {
			seenTick := map[string]bool{}
			for _, tk := range ticks {
				if seenTick[tk] || tk == "" {
					t.Errorf("%s: the %s chart's axis says %q twice: %q", at, name, tk, ticks)
				}
				seenTick[tk] = true
			}
			if name == "sale" && len(ticks) < 2 {
				t.Errorf("%s: the %s chart's axis has %q", at, name, ticks)
			}
		}
		// Exports in UTC.
		if want := saleStart.UTC().Format(time.RFC3339); s.CSVMinute != want || s.JSONMinute != want || !strings.HasSuffix(s.JSONFrom, "Z") {
			t.Errorf("%s: exports start at CSV %q, JSON %q (from %q), want %q", at, s.CSVMinute, s.JSONMinute, s.JSONFrom, want)
		}
	}
}
