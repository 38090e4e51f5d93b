package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// TestBrowserShopperPages (web/e2e/shopper.mjs): in Chromium, the progress
// bar shows the share of the line passed since entry, live; a newcomer who
// found the sale sold out is taken into the line, without a reload, when the
// operator undoes it; and the draw of a random line shows the live
// indicator, the reconnecting state and a way to leave.
func TestBrowserShopperPages(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	site := startBrowserSite(t, browserBlock{})
	site.putRoom(browserRoomSettings()) // paused
	site.enterOthers(2)
	ctx := context.Background()
	sold := browserRoomSettings()
	sold.SoldOut, sold.SoldOutMessage = true, queue.TextByLang(map[string]string{"en": "All gone.", "ko": "모두 팔렸습니다."})
	draw := browserRoomSettings()
	draw.QueueingMethod = queue.MethodRandom
	for name, s := range map[string]queue.Settings{"sold": sold, "draw": draw} {
		if err := site.line.PutRoom(ctx, name, s); err != nil {
			t.Fatalf("put room %s: %v", name, err)
		}
	}
	if _, _, err := site.line.Enter(ctx, "draw", "v:ahead"); err != nil {
		t.Fatal(err)
	}

	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var v struct {
		Progress struct {
			StartPosition, StartValue, Position, Value, Entry, Loads int64
			Text                                                     string
		}
		SoldOut struct {
			TicketBefore, Message, Ticket string
			ShownMs, Position, Loads      int64
			SoldOutHidden                 bool
		}
		Draw struct {
			IndicatorVisible, LeaveVisible, Stale, BannerGone, StaleAfter, DrawHidden, StatusHidden bool
			Ring, Ticket, Focused                                                                   string
		}
		PageErrors []string
	}
	kit.startScript(sctx, t, "shopper", site, "ADMIN_TOKEN="+browserAdminToken, "SOLD_ROOM=sold", "DRAW_ROOM=draw",
		"TIMEOUT_MS=110000").wait(&v)
	if len(v.PageErrors) > 0 {
		t.Errorf("page errors %q", v.PageErrors)
	}

	// Progress: of the four steps from #3 through the door (being next the
	// last), one taken at entry (25 %), three at #1 (75 %), on the same page.
	p := v.Progress
	if p.StartPosition != 3 || p.StartValue != 25 || p.Position != 1 || p.Entry != 3 || p.Value != 75 || p.Text != "75%" || p.Loads != 1 {
		t.Errorf("progress since entry %+v: want #3 at 25%%, then #1 at 75%% without a reload", p)
	}

	// Sold out, undone: the newcomer had no ticket, now has a place in the line, on the same page.
	s := v.SoldOut
	if s.TicketBefore != "" || s.Message != "모두 팔렸습니다." || s.Ticket == "" || s.Position != 1 || !s.SoldOutHidden || s.Loads != 1 {
		t.Errorf("sold out newcomer %+v: want the Korean message, then place 1 without a reload", s)
	}
	if s.ShownMs > 15_000 {
		t.Errorf("the line showed %d ms after undo: want within 15 s", s.ShownMs)
	}
	t.Logf("sold out undone: the newcomer's page showed place %d %d ms after the admin call", s.Position, s.ShownMs)
	if s.Ticket != "" {
		tks, _, err := site.line.StatusMany(ctx, "sold", []string{s.Ticket})
		if err != nil || len(tks) != 1 || tks[0].State != vocab.StateWaiting || tks[0].Position != 1 {
			t.Errorf("the newcomer's ticket in the line: %+v %v", tks, err)
		}
	}

	// The draw: live, reconnecting and back, leave.
	d := v.Draw
	if !d.IndicatorVisible || d.Ring != "live-ring" || !d.LeaveVisible || !d.Stale || !d.BannerGone || d.StaleAfter {
		t.Errorf("the draw's live status %+v", d)
	}
	if d.Focused != "leave-yes" || !d.DrawHidden || !d.StatusHidden {
		t.Errorf("leaving the draw %+v", d)
	}
	tks, _, err := site.line.StatusMany(ctx, "draw", []string{d.Ticket})
	if err != nil || len(tks) != 1 || tks[0].State == vocab.StateWaiting {
		t.Errorf("the draw ticket after leaving: %+v %v", tks, err)
	}
}
