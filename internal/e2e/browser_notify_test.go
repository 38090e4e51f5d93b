package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestBrowserNextSteps runs web/e2e/notify.mjs in one Chromium: in English
// and Korean at 390 and 1280 px, each page axe-clean with a screenshot in
// test-output/screenshots,
//   - an opening two days away shows its date and time in the browser's
//     zone: seen from Asia/Seoul and from America/New_York, the same
//     moment falls on different days;
//   - "Tell me when it's my turn" is offered in a draw and on a long
//     (paused) wait and, pressed with the notification permission granted,
//     says so in a status region; with the tab in the background,
//     admission shows a notification with the room's title and changes
//     the tab's title;
//   - the admitted page says how long the turn is held.
func TestBrowserNextSteps(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	site := startBrowserSite(t, browserBlock{})
	ctx := context.Background()
	title := map[string]string{"en": "Spring drop", "ko": "봄 드롭"}

	// 03:00 UTC two days on: noon in Seoul (UTC+9), 22:00 the day before in
	// New York (UTC-5 in winter, -4 in summer): never today in either.
	day := time.Now().UTC().Truncate(24 * time.Hour)
	opens := day.Add(48*time.Hour + 3*time.Hour)
	far := browserRoomSettings()
	far.Paused = false
	far.OpensAt = &opens
	if err := site.line.PutRoom(ctx, "far", far); err != nil {
		t.Fatal(err)
	}
	draw := browserRoomSettings()
	draw.QueueingMethod = queue.MethodRandom
	if err := site.line.PutRoom(ctx, "draw", draw); err != nil {
		t.Fatal(err)
	}
	rooms := map[string]string{}
	for _, l := range templates.Langs {
		for _, vp := range []string{"mobile", "desktop"} {
			s := browserRoomSettings() // paused: a long wait
			s.Title = queue.TextByLang(title)
			s.SessionTTLS = 600
			s.ArrivalWindowS = 120
			id := fmt.Sprintf("notify-%s-%s", l, vp)
			if err := site.line.PutRoom(ctx, id, s); err != nil {
				t.Fatalf("put room %s: %v", id, err)
			}
			rooms[string(l)+"-"+vp] = id
		}
	}
	roomsJSON, _ := json.Marshal(rooms)
	langs := make([]string, len(templates.Langs))
	for i, l := range templates.Langs {
		langs[i] = string(l)
	}

	const timeout = 5 * time.Minute // twelve audited pages and four admissions on a shared machine
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var v struct {
		Results []struct {
			State, Lang, Viewport, File string
			Violations                  []struct {
				ID, Impact, Help string
				Nodes            []string
			}
		}
		Facts struct {
			Opening []struct{ Lang, Viewport, Zone, Body string }
			Notify  []struct {
				Lang, Viewport, Room, Permission, PressedBefore, Status, StatusRole, Focused string
				Visibility, TitleWaiting, Title, Held                                        string
				NotifiedMs                                                                   int64
				Notes                                                                        []struct{ Title, Body, Lang, Visibility, DocTitle string }
			}
		}
		PageErrors []string
	}
	kit.startScript(sctx, t, "notify", site,
		"ADMIN_TOKEN="+browserAdminToken, "FAR_ROOM=far", "DRAW_ROOM=draw", "NOTIFY_ROOMS="+string(roomsJSON),
		"SHOT_DIR="+filepath.Join(kit.Root, "test-output", "screenshots"), "LANGS="+strings.Join(langs, ","),
		fmt.Sprintf("TIMEOUT_MS=%d", (timeout-10*time.Second).Milliseconds()),
	).wait(&v)

	if len(v.PageErrors) > 0 {
		t.Errorf("page errors: %q", v.PageErrors)
	}
	seen := map[string]bool{}
	for _, r := range v.Results {
		seen[r.State+"-"+r.Lang+"-"+r.Viewport] = true
		for _, x := range r.Violations {
			t.Errorf("%s %s %s: axe %s (%s): %s at %v", r.State, r.Lang, r.Viewport, x.ID, x.Impact, x.Help, x.Nodes)
		}
		checkBrowserPNG(t, r.File, map[string]int{"mobile": 390, "desktop": 1280}[r.Viewport])
	}
	for _, s := range []string{"opening-far-seoul", "opening-far-new-york", "notify-draw", "notify-offer", "notify-on", "admitted-held"} {
		for _, l := range langs {
			for _, vp := range []string{"mobile", "desktop"} {
				if !seen[s+"-"+l+"-"+vp] {
					t.Errorf("%s in %s at %s: not audited", s, l, vp)
				}
			}
		}
	}

	// The opening's date and time where the browser is.
	if len(v.Facts.Opening) != 2*2*len(langs) {
		t.Errorf("%d openings seen, want %d", len(v.Facts.Opening), 2*2*len(langs))
	}
	byZone := map[string]string{}
	for _, o := range v.Facts.Opening {
		loc, err := time.LoadLocation(o.Zone)
		if err != nil {
			t.Fatal(err)
		}
		at := opens.In(loc)
		date, clock := at.Format("Jan 2"), at.Format("3:04 PM")
		if o.Lang == "ko" {
			half := "오전"
			if at.Hour() >= 12 {
				half = "오후"
			}
			date, clock = fmt.Sprintf("%d월 %d일", at.Month(), at.Day()), half+" "+at.Format("3:04")
		}
		// ICU puts a narrow no-break space before "PM".
		body := strings.NewReplacer("\u202f", " ", "\u00a0", " ").Replace(o.Body)
		if !strings.Contains(body, date) || !strings.Contains(body, clock) || strings.Contains(body, "UTC") {
			t.Errorf("%s %s in %s: the opening reads %q, want %q and %q", o.Lang, o.Viewport, o.Zone, o.Body, date, clock)
		}
		key := o.Lang + "-" + o.Viewport
		if prev, ok := byZone[key]; ok && prev == o.Body {
			t.Errorf("%s: the same words in both zones: %q", key, o.Body)
		}
		byZone[key] = o.Body
	}

	// The notification, from a background tab, at admission.
	if len(v.Facts.Notify) != 2*len(langs) {
		t.Errorf("%d notify runs, want %d", len(v.Facts.Notify), 2*len(langs))
	}
	for _, n := range v.Facts.Notify {
		l := templates.Lang(n.Lang)
		at := n.Lang + " " + n.Viewport
		if n.Permission != "granted" || n.PressedBefore != "false" || n.Focused != "notify" || n.StatusRole != "status" ||
			n.Status != templates.T(l, "notify.on") {
			t.Errorf("%s: the option: permission %q, pressed before %q, focus on %q, status (%s) %q", at, n.Permission, n.PressedBefore, n.Focused, n.StatusRole, n.Status)
		}
		wantBody := strings.Replace(templates.T(l, "notify.body"), "{title}", title[n.Lang], 1)
		wantTitle := templates.T(l, "admitted.heading") + " – " + title[n.Lang]
		if len(n.Notes) != 1 {
			t.Errorf("%s: %d notifications, want 1: %+v", at, len(n.Notes), n.Notes)
		} else if nt := n.Notes[0]; nt.Title != templates.T(l, "admitted.heading") || nt.Body != wantBody || nt.Lang != n.Lang ||
			nt.Visibility != "hidden" || nt.DocTitle != wantTitle {
			t.Errorf("%s: notification %+v, want %q / %q shown in a hidden tab titled %q", at, nt, templates.T(l, "admitted.heading"), wantBody, wantTitle)
		}
		if n.Visibility != "hidden" || n.Title != wantTitle || !strings.HasPrefix(n.TitleWaiting, "(1) ") {
			t.Errorf("%s: tab %s, title while waiting %q, at admission %q (want %q)", at, n.Visibility, n.TitleWaiting, n.Title, wantTitle)
		}
		// How long the turn is held, and how soon to arrive.
		held := strings.Replace(templates.T(l, "admitted.held"), "{d}", templates.DurationWords(l, 10*time.Minute), 1)
		arrive := strings.Replace(templates.T(l, "admitted.arrive"), "{d}", templates.DurationWords(l, 2*time.Minute), 1)
		if n.Held != held+" "+arrive {
			t.Errorf("%s: the admitted page says %q, want %q", at, n.Held, held+" "+arrive)
		}
		t.Logf("%s: notified %d ms after the room opened", at, n.NotifiedMs)
	}
}
