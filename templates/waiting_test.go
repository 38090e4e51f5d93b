package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/static"
)

var now = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

const waitingJSON = `{"room":"drop","ticket":"0123456789abcdef0123456789abcdef","state":"waiting","position":1235,"waiting":5000,"eta_s":180,"next_update_ms":2000,"token":null,"orderable_at":null,"redirect_url":null,"paused":false}`

func waitingProps(lang Lang) WaitingProps {
	v, err := TicketViewFromJSON([]byte(waitingJSON))
	if err != nil {
		panic(err)
	}
	return WaitingProps{
		Lang: lang, Room: "drop", Title: "Spring drop", Message: "One pair per person.",
		Theme:      Theme{Color: "#0a7"},
		TicketJSON: waitingJSON, Ticket: v, EntryPosition: 2469,
		LastUpdate: now, Now: now,
	}
}

func admittedProps(lang Lang, in time.Duration) WaitingProps {
	p := waitingProps(lang)
	p.Ticket = TicketView{
		Ticket: p.Ticket.Ticket, State: vocab.StateAdmitted, NextUpdateMS: 2000,
		Token: "tok", RedirectURL: "https://shop.example/drop?wr_token=tok",
		OrderableAt: now.Add(in),
	}
	return p
}

func TestWaitingPageWaiting(t *testing.T) {
	cases := []struct {
		lang                                          Lang
		position, ahead, eta, total, conn, lastUpdate string
	}{
		{English, "1,235", "1,234 people ahead of you", "about 3 minutes", "5,000 people",
			"This page refreshes every 2 seconds", "3:04:05 PM UTC"},
		{Korean, "1,235", "내 앞에 1,234명", "약 3분", "5,000명",
			"이 페이지는 2초마다 새로고침됩니다", "오후 3:04:05 UTC"},
	}
	for _, c := range cases {
		t.Run(string(c.lang), func(t *testing.T) {
			doc := render(t, WaitingPage(waitingProps(c.lang)))

			for id, want := range map[string]string{
				"position": c.position, "ahead": c.ahead, "eta": c.eta, "waiting-total": c.total,
				"connection": c.conn, "last-update": c.lastUpdate,
				"room-title": "Spring drop", "room-message": "One pair per person.",
			} {
				if got := text(t, doc, id); got != want {
					t.Errorf("%s = %q, want %q", id, got, want)
				}
			}
			if lang, _ := doc.Find("html").Attr("lang"); lang != string(c.lang) {
				t.Errorf("html lang = %q", lang)
			}
			if got := doc.Find("title").Text(); got != "(1,235) Spring drop" {
				t.Errorf("title = %q", got)
			}

			// One polite, atomic live region, holding the place in line
			// (and the reconnecting banners of the line and the draw, hidden
			// until the connection drops).
			live := doc.Find(`[aria-live]`).Not(`[data-testid="reconnecting"]`).Not(`[data-testid="draw-reconnecting"]`)
			if live.Length() != 1 {
				t.Fatalf("%d live regions, want 1", live.Length())
			}
			if v, _ := live.Attr("aria-live"); v != "polite" {
				t.Errorf("aria-live = %q", v)
			}
			if v, _ := live.Attr("aria-atomic"); v != "true" {
				t.Errorf("aria-atomic = %q", v)
			}
			if live.Find(`[data-testid="position"]`).Length() != 1 {
				t.Error("the position is not inside the live region")
			}

			bar := byTestID(doc, "progress")
			if v, _ := bar.Attr("value"); v != "50" {
				t.Errorf("progress value = %q, want 50 (1,235 of the 2,470 steps from entry through the door taken)", v)
			}
			if v, _ := bar.Attr("max"); v != "100" {
				t.Errorf("progress max = %q", v)
			}
			if v, _ := bar.Attr("aria-label"); v == "" {
				t.Error("progress has no accessible name")
			}
			if v, _ := byTestID(doc, "last-update").Attr("datetime"); v != "2030-01-02T15:04:05Z" {
				t.Errorf("last-update datetime = %q", v)
			}

			if !visible(t, doc, "waiting") {
				t.Error("waiting block hidden")
			}
			for _, id := range []string{"admitted", "expired", "closed", "bypassed", "paused-notice"} {
				if visible(t, doc, id) {
					t.Errorf("%s visible while waiting", id)
				}
			}

			// Without script the page refreshes at the tier interval; with
			// script the refresh is inert and the client takes over.
			content, noscript, ok := refresh(doc)
			if !ok || content != "2" || !noscript {
				t.Errorf("refresh = %q (noscript %v, present %v), want 2 inside <noscript>", content, noscript, ok)
			}
			if src, _ := doc.Find("script[src]").Attr("src"); src != static.Path("waiting.js") {
				t.Errorf("script src = %q", src)
			}
			if _, ok := doc.Find("script[src]").Attr("defer"); !ok {
				t.Error("script is not deferred")
			}
			if href, _ := doc.Find(`link[rel="stylesheet"]`).Attr("href"); href != static.Path("waiting.css") {
				t.Errorf("stylesheet = %q", href)
			}
		})
	}
}

func TestWaitingPageDataForTheClient(t *testing.T) {
	doc := render(t, WaitingPage(waitingProps(Korean)))
	root := doc.Find("[data-waitroom]")
	if root.Length() != 1 {
		t.Fatal("no page root")
	}
	want := map[string]string{
		"data-room":           "drop",
		"data-ticket":         "0123456789abcdef0123456789abcdef",
		"data-lang":           "ko",
		"data-title":          "Spring drop",
		"data-ticket-json":    waitingJSON,
		"data-entry-position": "2469",
		"data-server-now":     "2030-01-02T15:04:05Z",
	}
	for attr, w := range want {
		if got, _ := root.Attr(attr); got != w {
			t.Errorf("%s = %q, want %q", attr, got, w)
		}
	}
	var strs map[string]string
	if err := json.Unmarshal([]byte(doc.Find("script#waitroom-strings").Text()), &strs); err != nil {
		t.Fatalf("client strings: %v", err)
	}
	if strs["eta.minutes.other"] != "약 {n}분" || len(strs) != len(ClientStrings(Korean)) {
		t.Errorf("client strings = %v", strs)
	}
}

func TestWaitingPagePaused(t *testing.T) {
	for lang, want := range map[Lang]string{English: "Admission is paused", Korean: "입장이 잠시 중지"} {
		p := waitingProps(lang)
		p.Ticket.Paused = true
		doc := render(t, WaitingPage(p))
		if !visible(t, doc, "paused-notice") || !strings.Contains(text(t, doc, "paused-notice"), want) {
			t.Errorf("%s: paused notice %q", lang, text(t, doc, "paused-notice"))
		}
		if _, _, ok := refresh(doc); !ok {
			t.Errorf("%s: a paused page must keep refreshing", lang)
		}
	}
}

func TestWaitingPageProgressDefaultsToCurrentPlace(t *testing.T) {
	p := waitingProps(English)
	p.EntryPosition = 0 // unknown: the bar starts here, it cannot go backwards
	doc := render(t, WaitingPage(p))
	if v, _ := byTestID(doc, "progress").Attr("value"); v != "0" {
		t.Errorf("progress = %q, want 0", v)
	}
	p.Ticket.Position, p.EntryPosition = 1, 1
	doc = render(t, WaitingPage(p))
	if v, _ := byTestID(doc, "progress").Attr("value"); v != "50" {
		t.Errorf("first in line since entry: progress = %q, want 50 (next in line is half the way; full only once admitted)", v)
	}
	if got := text(t, doc, "ahead"); got != "No one is ahead of you" {
		t.Errorf("ahead = %q", got)
	}
}

func TestWaitingPageAdmitted(t *testing.T) {
	cases := []struct {
		lang                       Lang
		in                         time.Duration
		heading, countdown, button string
		refresh                    string
	}{
		{English, 2500 * time.Millisecond, "It's your turn", "Taking you to the shop in 3 seconds…", "Continue to the shop",
			"3;url=https://shop.example/drop?wr_token=tok"},
		{English, time.Second, "It's your turn", "Taking you to the shop in 1 second…", "Continue to the shop",
			"1;url=https://shop.example/drop?wr_token=tok"},
		{English, -time.Second, "It's your turn", "Taking you to the shop now…", "Continue to the shop",
			"0;url=https://shop.example/drop?wr_token=tok"},
		{Korean, 3 * time.Second, "고객님 차례입니다", "3초 후 쇼핑 페이지로 이동합니다…", "쇼핑 페이지로 이동",
			"3;url=https://shop.example/drop?wr_token=tok"},
	}
	for _, c := range cases {
		doc := render(t, WaitingPage(admittedProps(c.lang, c.in)))
		if !visible(t, doc, "admitted") || visible(t, doc, "waiting") {
			t.Fatalf("%s %v: admitted block not the one shown", c.lang, c.in)
		}
		if got := byTestID(doc, "admitted").Find("h2").Text(); got != c.heading {
			t.Errorf("heading = %q, want %q", got, c.heading)
		}
		if got := text(t, doc, "countdown"); got != c.countdown {
			t.Errorf("countdown = %q, want %q", got, c.countdown)
		}
		// No-script users get a refresh to checkout once orderable, and a
		// plain link from then on; before, no button invites an early click.
		if visible(t, doc, "go") != (c.in <= 0) || text(t, doc, "go-link") != c.button {
			t.Errorf("%s %v: go-link visible %v, text %q", c.lang, c.in, visible(t, doc, "go"), text(t, doc, "go-link"))
		}
		if href, _ := byTestID(doc, "go-link").Attr("href"); href != "https://shop.example/drop?wr_token=tok" {
			t.Errorf("go-link href = %q", href)
		}
		if content, noscript, _ := refresh(doc); content != c.refresh || !noscript {
			t.Errorf("refresh = %q (noscript %v), want %q", content, noscript, c.refresh)
		}
		if got := doc.Find("title").Text(); got != "Spring drop" {
			t.Errorf("title = %q", got)
		}
	}
}

func TestWaitingPageRefusesScriptURLs(t *testing.T) {
	p := admittedProps(English, time.Second)
	p.Ticket.RedirectURL = "javascript:alert(1)"
	p.Theme.LogoURL = "javascript:alert(2)"
	doc := render(t, WaitingPage(p))
	if _, ok := byTestID(doc, "go-link").Attr("href"); ok {
		t.Error("go-link has a javascript: href")
	}
	if visible(t, doc, "go-link") {
		t.Error("go-link shown without a usable URL")
	}
	if _, _, ok := refresh(doc); ok {
		t.Error("refresh to a javascript: URL")
	}
	if byTestID(doc, "logo").Length() != 0 {
		t.Error("logo with a javascript: URL")
	}
}

func TestWaitingPageExpired(t *testing.T) {
	for lang, want := range map[Lang][2]string{
		English: {"Your place in line has expired", "Enter again"},
		Korean:  {"대기 순번이 만료되었습니다", "다시 입장하기"},
	} {
		p := waitingProps(lang)
		p.Ticket = TicketView{Ticket: p.Ticket.Ticket, State: vocab.StateExpired}
		doc := render(t, WaitingPage(p))
		if !visible(t, doc, "expired") || visible(t, doc, "waiting") {
			t.Fatalf("%s: expired block not the one shown", lang)
		}
		if got := byTestID(doc, "expired").Find("h2").Text(); got != want[0] {
			t.Errorf("%s: heading %q", lang, got)
		}
		if got := text(t, doc, "enter-again"); got != want[1] {
			t.Errorf("%s: enter-again %q", lang, got)
		}
		if href, _ := byTestID(doc, "enter-again").Attr("href"); href != "/rooms/drop?again=1&lang="+string(lang) {
			t.Errorf("%s: enter-again href %q", lang, href)
		}
		if _, _, ok := refresh(doc); ok {
			t.Errorf("%s: an expired page must not refresh", lang)
		}
	}
}

func TestWaitingPageClosed(t *testing.T) {
	for lang, want := range map[Lang]string{English: "This waiting room is closed", Korean: "대기실이 종료되었습니다"} {
		p := waitingProps(lang)
		p.Ticket = TicketView{Ticket: p.Ticket.Ticket, State: vocab.StateClosed}
		doc := render(t, WaitingPage(p))
		if !visible(t, doc, "closed") || visible(t, doc, "waiting") {
			t.Fatalf("%s: closed block not the one shown", lang)
		}
		if !strings.Contains(text(t, doc, "closed"), want) {
			t.Errorf("%s: closed = %q", lang, text(t, doc, "closed"))
		}
		if _, _, ok := refresh(doc); ok {
			t.Errorf("%s: a closed page must not refresh", lang)
		}
	}
}

func TestWaitingPageBypassed(t *testing.T) {
	p := waitingProps(English)
	p.Ticket = TicketView{Ticket: p.Ticket.Ticket, State: vocab.StateBypassed, AcceptURL: "/shop?wr_token=x"}
	doc := render(t, WaitingPage(p))
	if !visible(t, doc, "bypassed") {
		t.Fatal("bypassed block hidden")
	}
	if href, _ := byTestID(doc, "bypass-link").Attr("href"); href != "/shop?wr_token=x" {
		t.Errorf("bypass-link href = %q", href)
	}
	if content, _, _ := refresh(doc); content != "0;url=/shop?wr_token=x" {
		t.Errorf("refresh = %q", content)
	}
	if v, _ := doc.Find("[data-waitroom]").Attr("data-accept-url"); v != "/shop?wr_token=x" {
		t.Errorf("data-accept-url = %q", v)
	}
}

func TestWaitingPageTheme(t *testing.T) {
	cases := []struct{ colour, accent, ink string }{
		{"#0a7", "#00aa77", "#000000"},
		{"#1D4ED8", "#1d4ed8", "#ffffff"},
		{"#ffcc00", "#ffcc00", "#000000"},
		{"", DefaultAccent, "#ffffff"},
		{"red;} body{display:none", DefaultAccent, "#ffffff"},
	}
	for _, c := range cases {
		p := waitingProps(English)
		p.Theme = Theme{Color: c.colour, LogoURL: "/logo.svg"}
		doc := render(t, WaitingPage(p))
		want := ":root{--accent:" + c.accent + ";--accent-ink:" + c.ink + "}"
		if got := doc.Find("head style").Text(); got != want {
			t.Errorf("colour %q: style %q, want %q", c.colour, got, want)
		}
		if v, _ := doc.Find(`meta[name="theme-color"]`).Attr("content"); v != c.accent {
			t.Errorf("colour %q: theme-color %q", c.colour, v)
		}
		logo := byTestID(doc, "logo")
		if src, _ := logo.Attr("src"); src != "/logo.svg" {
			t.Errorf("logo src = %q", src)
		}
		if alt, _ := logo.Attr("alt"); alt == "" {
			t.Error("logo has no alt text")
		}
	}
}

func TestWaitingPageDefaultsAndEscaping(t *testing.T) {
	p := waitingProps(Korean)
	p.Title, p.Message = "", ""
	doc := render(t, WaitingPage(p))
	if got := text(t, doc, "room-title"); got != "대기실" {
		t.Errorf("default title = %q", got)
	}
	if byTestID(doc, "room-message").Length() != 0 {
		t.Error("empty message rendered")
	}

	p.Title, p.Message = `<script>alert(1)</script>`, `<b>bold</b>`
	doc = render(t, WaitingPage(p))
	if doc.Find("script:not([src]):not([type])").Length() != 0 || doc.Find("b").Length() != 0 {
		t.Error("title or message not escaped")
	}
	if got := text(t, doc, "room-message"); got != "<b>bold</b>" {
		t.Errorf("message = %q", got)
	}
}

func TestLayoutCSPNonce(t *testing.T) {
	ctx := templ.WithNonce(context.Background(), "n0nce")
	var buf bytes.Buffer
	if err := WaitingPage(waitingProps(English)).Render(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`<style nonce="n0nce">`, `<script id="waitroom-strings" type="application/json" nonce="n0nce">`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
}

func TestTicketViewFromJSON(t *testing.T) {
	v, err := TicketViewFromJSON([]byte(`{"room":"drop","ticket":"t1","state":"admitted","position":0,"waiting":3,"eta_s":0,"next_update_ms":2000,"token":"tok","orderable_at":"2030-01-02T15:04:05.250Z","redirect_url":"https://shop.example/?wr_token=tok","paused":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := TicketView{
		Ticket: "t1", State: vocab.StateAdmitted, Waiting: 3, NextUpdateMS: 2000, Paused: true,
		ETALowSeconds: -1, ETAHighSeconds: -1, // no range in this JSON
		Token: "tok", RedirectURL: "https://shop.example/?wr_token=tok",
		OrderableAt: time.Date(2030, 1, 2, 15, 4, 5, 250e6, time.UTC),
	}
	if !v.OrderableAt.Equal(want.OrderableAt) {
		t.Errorf("orderable_at = %v", v.OrderableAt)
	}
	v.OrderableAt = want.OrderableAt
	if v != want {
		t.Errorf("got %+v\nwant %+v", v, want)
	}
	if v, _ := TicketViewFromJSON([]byte(`{"ticket":"t1","state":"waiting","eta_s":null}`)); v.ETASeconds != -1 {
		t.Errorf("null eta_s = %d, want -1 (no estimate)", v.ETASeconds)
	}
	if v, _ := TicketViewFromJSON([]byte(`{"ticket":"t1","state":"waiting","eta_s":68,"eta_low_s":41,"eta_high_s":140}`)); v.ETALowSeconds != 41 || v.ETASeconds != 68 || v.ETAHighSeconds != 140 {
		t.Errorf("eta range read as %d–%d (point %d), want 41–140 (68)", v.ETALowSeconds, v.ETAHighSeconds, v.ETASeconds)
	}
	if _, err := TicketViewFromJSON([]byte(`{"orderable_at":"soon"}`)); err == nil {
		t.Error("bad orderable_at accepted")
	}
}

func TestWaitingPageShowsTimeOfEntry(t *testing.T) {
	for lang, want := range map[Lang]string{English: "2:58 PM UTC", Korean: "오후 2:58 UTC"} {
		p := waitingProps(lang)
		p.Ticket.EnteredAt = now.Add(-6 * time.Minute)
		doc := render(t, WaitingPage(p))
		if got := text(t, doc, "entered-at"); got != want {
			t.Errorf("%s: entered-at %q, want %q", lang, got, want)
		}
		if v, _ := byTestID(doc, "entered-at").Attr("datetime"); v != "2030-01-02T14:58:05Z" {
			t.Errorf("%s: entered-at datetime %q", lang, v)
		}
	}
	// Unknown (an older server's JSON): no line rather than a wrong time.
	if n := byTestID(render(t, WaitingPage(waitingProps(English))), "entered-at").Length(); n != 0 {
		t.Errorf("entered-at rendered without a time")
	}
}

func TestTicketViewReadsEnteredAt(t *testing.T) {
	v, err := TicketViewFromJSON([]byte(`{"state":"waiting","entered_at":"2030-01-02T10:02:13.456Z"}`))
	if err != nil || !v.EnteredAt.Equal(time.Date(2030, 1, 2, 10, 2, 13, 456e6, time.UTC)) {
		t.Fatalf("entered_at: %v %v", v.EnteredAt, err)
	}
	if _, err := TicketViewFromJSON([]byte(`{"entered_at":"yesterday"}`)); err == nil {
		t.Error("a bad entered_at was accepted")
	}
}

// A paused room gives no estimate: nobody moves, so a figure would be a guess
// (and "Working it out…" would never end).
func TestWaitingPagePausedShowsNoEstimate(t *testing.T) {
	for _, lang := range []Lang{English, Korean} {
		p := waitingProps(lang)
		p.Ticket.Paused = true
		if got := text(t, render(t, WaitingPage(p)), "eta"); got != T(lang, "eta.paused") {
			t.Errorf("%s: paused eta %q, want %q", lang, got, T(lang, "eta.paused"))
		}
		p.Ticket.Paused = false
		if got := text(t, render(t, WaitingPage(p)), "eta"); got == T(lang, "eta.paused") || got == T(lang, "eta.unknown") {
			t.Errorf("%s: eta %q while open", lang, got)
		}
	}
}

// The admitted page says how long the turn is held and, with an arrival
// window, how soon to reach the shop.
func TestAdmittedPageSaysHowLongTheTurnIsHeld(t *testing.T) {
	p := waitingProps(English)
	p.Ticket.State = vocab.StateAdmitted
	p.HeldFor, p.ArriveWithin = 5*time.Minute, 90*time.Second
	got := text(t, render(t, WaitingPage(p)), "admitted-held")
	if got != "Your turn is held for 5 minutes once it starts. Reach the shop within 90 seconds, or it passes to the next person in line." {
		t.Errorf("held = %q", got)
	}
	p.Lang, p.ArriveWithin = Korean, 0
	if got := text(t, render(t, WaitingPage(p)), "admitted-held"); got != "차례가 시작되면 5분 동안 유지됩니다." {
		t.Errorf("ko held = %q", got)
	}
	for d, want := range map[time.Duration]string{time.Second: "1 second", 2 * time.Hour: "2 hours", 61 * time.Second: "61 seconds", time.Minute: "1 minute"} {
		if got := DurationWords(English, d); got != want {
			t.Errorf("DurationWords(%v) = %q, want %q", d, got, want)
		}
	}
}

// An opening on another day says its date; today's says only the time.
func TestScheduledBodySaysTheDateWhenNotToday(t *testing.T) {
	now := time.Date(2026, 12, 2, 16, 20, 0, 0, time.UTC)
	for _, tc := range []struct {
		lang  Lang
		at    time.Time
		want  string
		avoid string
	}{
		{English, time.Date(2026, 12, 4, 19, 19, 0, 0, time.UTC), "Fri, Dec 4, 7:19 PM UTC", ""},
		{Korean, time.Date(2026, 12, 4, 19, 19, 0, 0, time.UTC), "12월 4일 (금) 오후 7:19 UTC", ""},
		{English, time.Date(2026, 12, 2, 19, 19, 0, 0, time.UTC), "7:19 PM UTC", "Dec"},
	} {
		p := waitingProps(tc.lang)
		p.Now, p.Ticket.State, p.Ticket.OpensAt = now, vocab.StateScheduled, tc.at
		got := text(t, render(t, WaitingPage(p)), "scheduled-body")
		if !strings.Contains(got, tc.want) || (tc.avoid != "" && strings.Contains(got, tc.avoid)) {
			t.Errorf("%s %v: %q, want %q", tc.lang, tc.at, got, tc.want)
		}
	}
}
