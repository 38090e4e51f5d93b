package e2e_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// embedPreQueueScenario (web/e2e/embed-prequeue.mjs): the shop's frame in
// the pre-queue of a scheduled opening shows the countdown, with no place
// yet; the opening is then moved to a few seconds ahead, the frame counts
// down to it, and the admission loop's draw at the opening puts the visitor
// in line: the frame shows the drawn place and tells the shop, without a
// reload. Only the opening's second is awaited, through the script's
// signals; no fixed sleep.
func embedPreQueueScenario(t *testing.T, kit browserKit) {
	site := startEmbedSite(t)
	s := site.settings(true) // paused: the drawn place holds still
	// Ten seconds short of an hour, so the first text is "59:5x" however
	// quickly the page reads it (a whole hour showed "1:00:00" when it read
	// within the second the truncation cut).
	far := time.Now().Add(time.Hour - 10*time.Second).UTC().Truncate(time.Second)
	s.OpensAt = &far
	site.putRoom(s)

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "embed-prequeue", site.browserSite, site.env()...)
	var rd struct{ First string }
	sc.awaitReady(ctx, &rd)
	const lead = 4 * time.Second
	soon := time.Now().Add(lead).UTC()
	s.OpensAt = &soon
	site.putRoom(s)

	var v struct {
		First, Unknown, FrameURL       string
		WaitingHidden, ScheduledHidden bool
		Countdown                      []struct {
			Text string
			T    int64
		}
		Position int64
		Updates  []struct {
			State    string
			Position int64
			T        int64
		}
		Foreign, PageErrors []string
	}
	sc.wait(&v)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off our servers %q, page errors %q", v.Foreign, v.PageErrors)
	}
	en := templates.English
	counting := func(text string, most int64) bool {
		for n := int64(1); n <= most; n++ {
			if text == strings.Replace(templates.T(en, "scheduled.countdown"), "{t}", templates.CountdownClock(n), 1) {
				return true
			}
		}
		return false
	}
	// Before: a countdown of most of an hour that counts, no place, the line hidden.
	if !counting(v.First, 3600) || !strings.Contains(v.First, "59:") || v.Unknown != templates.T(en, "scheduled.unknown") || !v.WaitingHidden {
		t.Errorf("the frame before the opening: countdown %q, place %q, line hidden %v", v.First, v.Unknown, v.WaitingHidden)
	}
	// Then the short count to the new opening, seconds falling.
	var short []string
	for _, c := range v.Countdown {
		if counting(c.Text, int64(lead/time.Second)) {
			short = append(short, c.Text)
		}
	}
	texts := make([]string, len(v.Countdown))
	for i, c := range v.Countdown {
		texts[i] = c.Text
	}
	t.Logf("the frame's countdown showed %q", texts)
	// Each text is one second ("Opens in 0:04", "0:03", …): falling, compared as text.
	if len(short) < 2 || !slices.IsSortedFunc(short, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("the short countdown %q: want at least two seconds counted down", short)
	}
	// After: the drawn place, the pre-queue block gone, and the shop told.
	if v.Position != 1 || !v.ScheduledHidden {
		t.Errorf("the frame after the opening: place %d, pre-queue hidden %v: want place 1", v.Position, v.ScheduledHidden)
	}
	sawScheduled := slices.IndexFunc(v.Updates, func(u struct {
		State    string
		Position int64
		T        int64
	}) bool {
		return u.State == "scheduled"
	})
	sawPlace := slices.IndexFunc(v.Updates, func(u struct {
		State    string
		Position int64
		T        int64
	}) bool {
		return u.State == "waiting" && u.Position == 1
	})
	if sawScheduled < 0 || sawPlace < sawScheduled {
		t.Errorf("the shop heard %+v: want scheduled, then waiting at place 1", v.Updates)
	}
	if sawPlace >= 0 {
		if at := time.UnixMilli(v.Updates[sawPlace].T); at.Before(soon) {
			t.Errorf("the place reached the shop at %v, before the opening at %v", at, soon)
		} else {
			t.Logf("the drawn place reached the shop %v after the opening", at.Sub(soon).Round(time.Millisecond))
		}
	}
	if !strings.HasPrefix(v.FrameURL, site.waitroom+"/embed/rooms/"+browserRoom+"?") {
		t.Errorf("frame at %s", v.FrameURL)
	}
}

// embedSoldOutScenario (web/e2e/embed-soldout.mjs): the shop's frame opened
// while the sale is sold out shows the sold out page with no place; when
// the operator undoes it, the same frame, without a reload, takes its place
// in the line, goes live and tells the shop.
func embedSoldOutScenario(t *testing.T, kit browserKit) {
	site := startEmbedSite(t)
	s := site.settings(true)
	s.SoldOut, s.SoldOutMessage = true, queue.Text("All gone, thank you.")
	site.putRoom(s)

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "embed-soldout", site.browserSite, site.env()...)
	var rd struct{ Message string }
	sc.awaitReady(ctx, &rd)
	if st := site.stats(); st["waiting"] != 0 {
		t.Errorf("stats %v: nobody should hold a place while sold out", st)
	}
	s.SoldOut = false
	site.putRoom(s)

	var v struct {
		Message, Mode string
		Position      int64
		SoldOutHidden bool
		FrameLoads    []string
		Updates       []struct {
			State, Ticket string
			Position      int64
		}
		Foreign, PageErrors []string
	}
	sc.wait(&v)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off our servers %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if rd.Message != "All gone, thank you." {
		t.Errorf("the frame's sold out message %q", rd.Message)
	}
	if v.Position != 1 || !v.SoldOutHidden || len(v.FrameLoads) != 1 {
		t.Errorf("after undo: place %d, sold out hidden %v, frame loads %q: want place 1 in the same frame", v.Position, v.SoldOutHidden, v.FrameLoads)
	}
	if n := len(v.Updates); n < 2 || v.Updates[0].State != "sold_out" || v.Updates[0].Ticket != "" ||
		v.Updates[n-1].State != "waiting" || v.Updates[n-1].Ticket == "" || v.Updates[n-1].Position != 1 {
		t.Errorf("the shop heard %+v: want sold out without a ticket, then a place", v.Updates)
	}
	if st := site.stats(); st["waiting"] != 1 {
		t.Errorf("stats %v: want the visitor in line", st)
	}
}
