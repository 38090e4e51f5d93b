package templates

import (
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/waitroom/waitroom/internal/vocab"
)

// koreanShopperPages are the shopper pages' states added for issue 14 that
// TestKoreanPagesSpeakOnlyKorean checks beside koreanPages.
func koreanShopperPages() map[string]templ.Component {
	ko := Korean
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	wait := func(v TicketView) templ.Component {
		return WaitingPage(WaitingProps{Lang: ko, Room: "drop", Ticket: v, LastUpdate: now, Now: now})
	}
	return map[string]templ.Component{
		"draw":           wait(TicketView{State: vocab.StateWaiting, Method: vocab.MethodRandom, Waiting: 10, ETASeconds: -1, NextUpdateMS: 2000}),
		"sold-out":       wait(TicketView{State: vocab.StateSoldOut, SoldOutMessage: "감사합니다", ETASeconds: -1}),
		"maintenance":    wait(TicketView{State: vocab.StateClosed, Reason: "maintenance", ETASeconds: -1}),
		"full":           wait(TicketView{State: vocab.StateFull, RetryAfterS: 15, ETASeconds: -1}),
		"scheduled":      wait(TicketView{State: vocab.StateScheduled, OpensAt: now.Add(time.Hour), ETASeconds: -1}),
		"accept-unknown": AcceptPage(AcceptProps{Lang: ko, Room: "drop", Degraded: true, Unknown: true}),
	}
}

// TestLiveStatusGoesWithAPlace: the live indicator and leaving show under
// the waiting block and the draw (a random line), and nowhere else.
func TestLiveStatusGoesWithAPlace(t *testing.T) {
	for _, c := range []struct {
		name string
		v    TicketView
		want bool
	}{
		{"waiting", TicketView{State: vocab.StateWaiting, Position: 3, Waiting: 5}, true},
		{"draw", TicketView{State: vocab.StateWaiting, Method: vocab.MethodRandom, Waiting: 5}, true},
		{"scheduled", TicketView{State: vocab.StateScheduled, OpensAt: now.Add(time.Hour)}, false},
		{"sold out", TicketView{State: vocab.StateSoldOut}, false},
		{"maintenance", TicketView{State: vocab.StateClosed, Reason: "maintenance"}, false},
		{"admitted", TicketView{State: vocab.StateAdmitted, RedirectURL: "/shop", OrderableAt: now}, false},
		{"expired", TicketView{State: vocab.StateExpired}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.v.ETASeconds = -1
			doc := render(t, WaitingPage(WaitingProps{Lang: English, Room: "drop", Ticket: c.v, LastUpdate: now, Now: now}))
			if got := visible(t, doc, "live-status"); got != c.want {
				t.Errorf("live status shown %v, want %v", got, c.want)
			}
			// One indicator and one leave control, whichever block shows.
			for _, id := range []string{"connection", "leave", "leave-box"} {
				if n := byTestID(doc, id).Length(); n != 1 {
					t.Errorf("%d [data-testid=%s], want 1", n, id)
				}
			}
			if c.want && byTestID(doc, "connection").ParentsFiltered(`[data-testid="live-status"]`).Length() != 1 {
				t.Error("the connection indicator is not in the live status")
			}
		})
	}
}

// TestAcceptPageUnknownIntent: an intent the visitor has none of is named
// as an unknown request (not a missing room), with a way to make a new one.
func TestAcceptPageUnknownIntent(t *testing.T) {
	for _, lang := range Langs {
		doc := render(t, AcceptPage(AcceptProps{Lang: lang, Room: "drop", Degraded: true, Unknown: true}))
		if got, want := text(t, doc, "intent-unknown"), T(lang, "accept.unknown.heading"); len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("%s: unknown request block %q, want it to start with %q", lang, got, want)
		}
		if href, _ := byTestID(doc, "intent-unknown-again").Attr("href"); href != "/rooms/drop/accept?lang="+string(lang) {
			t.Errorf("%s: new request link %q", lang, href)
		}
		if byTestID(doc, "accept-form").Length() != 0 || byTestID(doc, "intent").Length() != 0 {
			t.Errorf("%s: the unknown request page also shows the form or an intent", lang)
		}
		if got := doc.Find("title").Text(); got != T(lang, "accept.unknown.heading") {
			t.Errorf("%s: title %q", lang, got)
		}
	}
}
