package e2e_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/waitroom/waitroom/templates"
)

// embedLeaveScenario (web/e2e/embed-leave.mjs): the shop's frame offers
// "Leave the line" as the waiting page does, in English and Korean, by
// keyboard: asked first, "Stay" keeps the place, "Yes" gives it up (the
// store holds one waiter fewer), the frame says so and tells the shop, and
// the visitor can join again from the same frame, at the back.
func embedLeaveScenario(t *testing.T, kit browserKit) {
	site := startEmbedSite(t)
	site.putRoom(site.settings(true)) // paused: everyone waits

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "embed-leave", site.browserSite, site.env()...)
	type visit struct {
		Locale, Button, Confirm, Yes, No                  string
		FocusAsked, ExpandedAsked, FocusStayed, FocusLeft string
		LeftHeading, Again, LeftMessage                   string
		WaitingHidden, StatusHidden                       bool
		LeftHiddenAgain, ConfirmHiddenAgain               bool
		LeaveShownAgain                                   bool
		Tickets                                           []string
	}
	var v struct {
		En, Ko              visit
		PageErrors, Foreign []string
	}
	sc.wait(&v)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off our servers %q, page errors %q", v.Foreign, v.PageErrors)
	}
	for _, c := range []struct {
		lang templates.Lang
		v    visit
	}{{templates.English, v.En}, {templates.Korean, v.Ko}} {
		l, got := c.lang, c.v
		want := visit{Locale: got.Locale,
			Button: templates.T(l, "leave.button"), Confirm: templates.T(l, "leave.confirm"),
			Yes: templates.T(l, "leave.yes"), No: templates.T(l, "leave.no"),
			FocusAsked: "leave-yes", ExpandedAsked: "true", FocusStayed: "leave", FocusLeft: "left",
			LeftHeading: templates.T(l, "left.heading"), Again: templates.T(l, "left.again"), LeftMessage: "waitroom:left",
			WaitingHidden: true, StatusHidden: true,
			LeftHiddenAgain: got.LeftHiddenAgain, ConfirmHiddenAgain: got.ConfirmHiddenAgain, LeaveShownAgain: got.LeaveShownAgain,
			Tickets: got.Tickets}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", l, got, want)
		}
	}
	// English joined again: a second ticket, the leave controls back and closed.
	if !v.En.LeftHiddenAgain || !v.En.ConfirmHiddenAgain || !v.En.LeaveShownAgain || len(v.En.Tickets) != 2 {
		t.Errorf("joining again: %+v", v.En)
	}
	if st := site.stats(); st["waiting"] != 1 {
		t.Errorf("stats %v: want only the visitor who joined again in line", st)
	}
}
