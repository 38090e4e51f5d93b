package e2e_test

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestBrowserPreQueue: the scheduled state in Chromium (a countdown that
// counts, as a timer that is not announced every second, and no place yet),
// then "open now" through the admin API: both open pages move to the line
// with their drawn places, pushed, without reloading.
func TestBrowserPreQueue(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	site := startBrowserSite(t, browserBlock{})
	s := browserRoomSettings() // paused: the drawn places hold still
	opens := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	s.OpensAt = &opens
	site.putRoom(s)

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	type draw struct {
		OpensAt   *time.Time `json:"opens_at"`
		Scheduled int64
		Draw      *struct {
			At     time.Time
			Drawn  int64
			Server string
			Order  string `json:"order_sha256"`
		}
	}
	var v struct {
		Before, After draw
		Visitors      []struct {
			Lang, Ticket, First, Unknown string
			Timer                        struct{ Role, Live, Label string }
			WaitingHidden                bool
			MovedMs                      int64
			Position                     int64
			ScheduledHidden              bool
			Navigations                  int
		}
		Foreign, PageErrors []string
	}
	kit.startScript(ctx, t, "prequeue", site, "ADMIN_TOKEN="+browserAdminToken).wait(&v)

	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off loopback %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if v.Before.Draw != nil || v.Before.Scheduled != 2 || v.Before.OpensAt == nil || !v.Before.OpensAt.Equal(opens) {
		t.Errorf("before the opening: %+v, want 2 scheduled and no draw", v.Before)
	}
	if v.After.Draw == nil || v.After.Draw.Drawn != 2 || v.After.Scheduled != 0 || v.After.Draw.Server == "" || len(v.After.Draw.Order) != 64 {
		t.Errorf("after open now: %+v, want a draw of 2", v.After)
	}
	if len(v.Visitors) != 2 {
		t.Fatalf("visitors %+v", v.Visitors)
	}
	var places []int64
	for _, x := range v.Visitors {
		t.Logf("%s: countdown %q, moved to #%d %d ms after open now", x.Lang, x.First, x.Position, x.MovedMs)
		if x.Timer.Role != "timer" || (x.Timer.Live != "" && x.Timer.Live != "off") || x.Timer.Label == "" {
			t.Errorf("%s: countdown %+v, want a labelled timer that is not live", x.Lang, x.Timer)
		}
		if x.Unknown == "" || !x.WaitingHidden {
			t.Errorf("%s: before the draw the place should read unknown (%q) and the line be hidden (%v)", x.Lang, x.Unknown, x.WaitingHidden)
		}
		if !x.ScheduledHidden || x.Navigations != 1 {
			t.Errorf("%s: after the draw the pre-queue block hidden %v, page loads %d: want moved in place", x.Lang, x.ScheduledHidden, x.Navigations)
		}
		places = append(places, x.Position)
	}
	slices.Sort(places)
	if !slices.Equal(places, []int64{1, 2}) {
		t.Errorf("drawn places %v, want 1 and 2", places)
	}
}
