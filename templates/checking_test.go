package templates

import (
	"strings"
	"testing"
	"time"
)

// The checking step: shown alone, spoken by one status region, in the
// page's language; without script it says why, and it never refreshes
// itself (a refresh cannot take a place while the room asks for work).
func TestCheckingStep(t *testing.T) {
	for _, lang := range Langs {
		now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		doc := render(t, WaitingPage(WaitingProps{Lang: lang, Room: "drop", Ticket: TicketView{State: StateChecking},
			ChallengeURL: "/api/rooms/drop/challenge", LastUpdate: now, Now: now}))
		if got := text(t, doc, "checking-status"); got != T(lang, "checking.body") {
			t.Errorf("%s: status %q", lang, got)
		}
		if role, _ := byTestID(doc, "checking-status").Attr("role"); role != "status" {
			t.Errorf("%s: status role %q", lang, role)
		}
		if h := byTestID(doc, "checking").Find("h2").Text(); h != T(lang, "checking.heading") {
			t.Errorf("%s: heading %q", lang, h)
		}
		if ns := doc.Find("noscript").Text(); !strings.Contains(ns, T(lang, "checking.nojs")) {
			t.Errorf("%s: noscript %q", lang, ns)
		}
		if doc.Find(`meta[http-equiv="refresh"]`).Length() != 0 || strings.Contains(doc.Find("noscript").Text(), "refresh") {
			t.Errorf("%s: the checking step refreshes itself", lang)
		}
		main := doc.Find("[data-waitroom]")
		if u, _ := main.Attr("data-challenge-url"); u != "/api/rooms/drop/challenge" {
			t.Errorf("%s: challenge url %q", lang, u)
		}
		if w, _ := main.Attr("data-pow-worker"); !strings.HasPrefix(w, "/static/pow-worker.") {
			t.Errorf("%s: worker %q", lang, w)
		}
		for _, id := range []string{"waiting", "admitted", "expired", "closed"} {
			if _, hidden := byTestID(doc, id).Attr("hidden"); !hidden {
				t.Errorf("%s: block %s shows beside the checking step", lang, id)
			}
		}
	}
}
