package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// a11yStates are the states web/e2e/a11y.mjs audits, each in every language
// at both viewports.
var a11yStates = []string{
	"checking", "closed", "scheduled", "waiting", "paused", "reconnecting", "live", "leave-confirm", "left",
	"expired", "admitted-countdown", "admitted", "accept", "accept-intent",
	"draw", "maintenance", "full", "sold-out",
	"draw-pending", "embed", "embed-scheduled", "not-found", "no-checkout", "accept-recovered",
}

// TestBrowserAccessibility runs axe-core on every state of the waiting page,
// the embed and the accept page in English and Korean, at 390x844 and 1280x800, and
// saves a screenshot of each to test-output/screenshots. On the way it
// checks the page's live behaviour: the live ring, the reconnecting banner
// and recovery, leaving the line, the time of entry, no early "Continue",
// and the accept page going back to the line when a degraded drill ends.
func TestBrowserAccessibility(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	ctx := context.Background()
	site := a11ySite(t) // the line's part
	langs := make([]string, len(templates.Langs))
	for i, l := range templates.Langs {
		langs[i] = string(l)
	}
	shots := filepath.Join(kit.Root, "test-output", "screenshots")
	// Two runs of the script: the line's states, and the states around it
	// (PART=more), whose results join the first's. The budget is generous:
	// on a machine shared with other builds the line's part alone has taken
	// close to 5 minutes.
	const timeout = 8 * time.Minute
	var v struct {
		Results []struct {
			State, Lang, Viewport, File string
			Violations                  []struct {
				ID, Impact, Help string
				Nodes            []string
			}
		}
		Facts struct {
			Reconnect []struct {
				Lang, Viewport, Role   string
				Ring, StillRing        struct{ Animation, Opacity, Border string }
				Stale, Tag, BannerGone bool
				RecoveredMs            int64
			}
			Left []struct {
				Lang, Viewport, Ticket, Since, Focused, Again string
				Progress                                      int
				Position, Entry                               int64
			}
			Early []struct {
				Lang, Viewport, Countdown string
				GoEarly                   bool
				AfterAudit                struct {
					GoHidden  bool
					Countdown string
				}
			}
			SoldOut         []soldOutFact
			DrawPending     []struct{ Lang, Viewport, Text string }
			AcceptRecovered []struct {
				Lang, Viewport, Notice, Expected string
				Moved                            bool
			}
		}
		Meta []struct {
			Lang, Viewport                 string
			MetaRefresh, IntentMetaRefresh int
		}
		Recovery *struct {
			MovedMs int64
			URL     string
		}
		PageErrors []string
	}
	more := v
	// The two parts run at once, each on a site of its own: the line's part
	// turns degraded mode on for its whole server, which the other part's
	// accept page must not see.
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var scripts []*browserScript
	for _, part := range []struct {
		name string
		site *browserSite
	}{{"line", site}, {"more", a11ySite(t)}} {
		scripts = append(scripts, kit.startScript(sctx, t, "a11y", part.site, "PART="+part.name, "SCENARIO="+t.Name()+"-"+part.name,
			"ADMIN_TOKEN="+browserAdminToken, "CHECKING_ROOM=checking", "CLOSED_ROOM=ended", "SHOT_DIR="+shots,
			"FRAMED_ROOM=framed", "FRAMED_SCHEDULED_ROOM=framed-soon",
			"DRAW_ROOM=draw", "MAINT_ROOM=maint", "FULL_ROOM=full", "SOLD_ROOM=drop", "SCHEDULED_ROOM=scheduled",
			"LANGS="+strings.Join(langs, ","), fmt.Sprintf("TIMEOUT_MS=%d", (timeout-10*time.Second).Milliseconds()),
		))
	}
	scripts[0].wait(&v)
	scripts[1].wait(&more)
	v.Results = append(v.Results, more.Results...)
	v.PageErrors = append(v.PageErrors, more.PageErrors...)
	v.Facts.DrawPending, v.Facts.AcceptRecovered = more.Facts.DrawPending, more.Facts.AcceptRecovered

	if len(v.PageErrors) > 0 {
		t.Errorf("page errors: %q", v.PageErrors)
	}
	// Every state, language and viewport audited, with no violations.
	seen := map[string]bool{}
	for _, r := range v.Results {
		seen[r.State+"-"+r.Lang+"-"+r.Viewport] = true
		for _, x := range r.Violations {
			t.Errorf("%s %s %s: axe %s (%s): %s at %v", r.State, r.Lang, r.Viewport, x.ID, x.Impact, x.Help, x.Nodes)
		}
		checkBrowserPNG(t, r.File, map[string]int{"mobile": 390, "desktop": 1280}[r.Viewport])
	}
	for _, s := range a11yStates {
		for _, l := range langs {
			for _, vp := range []string{"mobile", "desktop"} {
				if !seen[s+"-"+l+"-"+vp] {
					t.Errorf("%s in %s at %s: not audited", s, l, vp)
				}
			}
		}
	}

	// Live: the ring moves (and stands, still visible, under reduced motion); lost: a status banner, the numbers marked, and back by itself.
	for _, r := range v.Facts.Reconnect {
		if r.Ring.Animation != "live-ring" || r.StillRing.Animation != "none" || r.StillRing.Opacity != "1" ||
			r.StillRing.Border != "solid" || !r.Stale || !r.Tag || r.Role != "status" || !r.BannerGone {
			t.Errorf("%s %s: live and reconnecting %+v", r.Lang, r.Viewport, r)
		}
		t.Logf("%s %s: live again %d ms after the network came back", r.Lang, r.Viewport, r.RecoveredMs)
	}
	// Leaving: asked first (focus on the confirmation), the place given up, a way back.
	for _, l := range v.Facts.Left {
		if l.Focused != "leave-yes" || !strings.HasPrefix(l.Again, "/rooms/"+browserRoom+"?again=1&lang="+l.Lang) || l.Since == "" {
			t.Errorf("%s %s: leave %+v", l.Lang, l.Viewport, l)
		}
		// The bar is the share of the steps from entry through the door
		// taken since, being next counted as the last (templates.progressPercent).
		if want := min(100*(l.Entry-l.Position+1)/(l.Entry+1), 99); l.Entry < l.Position || int64(l.Progress) != want {
			t.Errorf("%s %s: progress %d%% at #%d, entered at #%d: want %d%%", l.Lang, l.Viewport, l.Progress, l.Position, l.Entry, want)
		}
		tks, _, err := site.line.StatusMany(ctx, browserRoom, []string{l.Ticket})
		if err != nil || len(tks) != 1 || tks[0].State == vocab.StateWaiting {
			t.Errorf("%s %s: ticket after leaving: %+v %v", l.Lang, l.Viewport, tks, err)
		}
	}
	if len(v.Facts.Left) != 2*len(langs) {
		t.Errorf("%d visitors left the line, want %d", len(v.Facts.Left), 2*len(langs))
	}
	// No early "Continue": hidden while the countdown counts, before the
	// audit and after it; shown after it only once the count has run out.
	for _, e := range v.Facts.Early {
		l := templates.Lang(e.Lang)
		counting := func(text string) bool {
			return slices.ContainsFunc([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, func(n int64) bool {
				return text == templates.Tn(l, "admitted.countdown", n)
			})
		}
		after := e.AfterAudit
		hiddenWhileCounting := (after.GoHidden && counting(after.Countdown)) ||
			(!after.GoHidden && after.Countdown == templates.T(l, "admitted.now"))
		if e.GoEarly || !counting(e.Countdown) || !hiddenWhileCounting {
			t.Errorf("%s %s: admitted countdown %+v: want a count and no Continue until it runs out", e.Lang, e.Viewport, e)
		}
	}
	checkSoldOutFacts(t, v.Facts.SoldOut, 2*len(langs))
	// The count over, before the draw: "drawing", in the page's language.
	for _, d := range v.Facts.DrawPending {
		if d.Text != templates.T(templates.Lang(d.Lang), "scheduled.drawing") {
			t.Errorf("%s %s: the pre-queue after its count reads %q", d.Lang, d.Viewport, d.Text)
		}
	}
	// The accept page after recovery says so, in the page's language, and
	// heads back to the line.
	for _, r := range v.Facts.AcceptRecovered {
		if r.Notice != templates.T(templates.Lang(r.Lang), "accept.recovered") || r.Notice != r.Expected || !r.Moved {
			t.Errorf("%s %s: the accept page after recovery says %q", r.Lang, r.Viewport, r.Notice)
		}
	}
	if n := 2 * len(langs); len(v.Facts.DrawPending) != n || len(v.Facts.AcceptRecovered) != n {
		t.Errorf("%d draw pending and %d recovered accept pages checked, want %d each", len(v.Facts.DrawPending), len(v.Facts.AcceptRecovered), n)
	}
	// The accept page: no meta refresh while the script runs.
	for _, m := range v.Meta {
		if m.MetaRefresh != 0 || m.IntentMetaRefresh != 0 {
			t.Errorf("%s %s: meta refresh on the accept page with script: %+v", m.Lang, m.Viewport, m)
		}
	}
	// Recovery: within a few seconds of the drill's end, back to the line.
	if v.Recovery == nil || v.Recovery.MovedMs > 10_000 || !strings.Contains(v.Recovery.URL, "/rooms/"+browserRoom) {
		t.Errorf("accept page after the drill ended: %+v, want back in the line within 10 s", v.Recovery)
	} else {
		t.Logf("the accept page went back to the line %d ms after the drill ended", v.Recovery.MovedMs)
	}
}

// a11ySite starts a site with the rooms web/e2e/a11y.mjs visits: ROOM
// (paused, two others ahead), the checking, closed, scheduled and framed
// rooms and the queueing methods' rooms.
func a11ySite(t *testing.T) *browserSite {
	t.Helper()
	site := startBrowserSite(t, browserBlock{})
	settings := browserRoomSettings() // paused
	site.putRoom(settings)
	site.enterOthers(2)
	ctx := context.Background()
	checking := browserRoomSettings()
	checking.BotProtection = queue.BotProtection{ProofOfWork: queue.ProofOfWorkOn, PowCost: queue.DefaultPowCost}
	ended := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	closed := browserRoomSettings()
	closed.EndsAt = &ended
	opens := time.Now().Add(2 * time.Hour)
	scheduled := browserRoomSettings()
	scheduled.OpensAt = &opens
	framed := browserRoomSettings()
	framed.AllowedEmbedders = []string{site.url}
	framedScheduled := scheduled
	framedScheduled.AllowedEmbedders = []string{site.url}
	for name, s := range map[string]queue.Settings{"checking": checking, "ended": closed, "scheduled": scheduled,
		"framed": framed, "framed-soon": framedScheduled} {
		if err := site.line.PutRoom(ctx, name, s); err != nil {
			t.Fatalf("put room %s: %v", name, err)
		}
	}
	methodRooms(t, site)
	return site
}
