package templates

import (
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/waitroom/waitroom/internal/vocab"
)

// koreanPages are the pages and states a visitor or an operator can see,
// rendered in Korean. A new page or state belongs here.
func koreanPages() map[string]templ.Component {
	ko := Korean
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	wait := func(v TicketView) templ.Component {
		return WaitingPage(WaitingProps{Lang: ko, Room: "drop", Ticket: v, LastUpdate: now, Now: now, ChallengeURL: "/api/rooms/drop/challenge"})
	}
	down := false
	health := AdminHealth{RedisUp: true, Degraded: &down, Reason: "redis answers", ReasonKey: "admin.reason.redis_up", Outbox: &AdminOutbox{}}
	admin := AdminPage{Lang: ko, CSRF: "x", Path: "/admin", Health: &health}
	on := true
	view := AdminRoomView{Room: "drop", Title: "Drop", Capacity: 100, BatchSize: 10, BatchIntervalMS: 200, Activation: "always",
		LineOn: &on, LineReasonKey: "admin.line.always", Point: AdminPoint{Waiting: 5, Active: 100, Capacity: 100}, Health: health}
	return map[string]templ.Component{
		"waiting":  wait(TicketView{State: vocab.StateWaiting, Position: 3, Waiting: 10, ETASeconds: 90, NextUpdateMS: 2000, EnteredAt: now}),
		"paused":   wait(TicketView{State: vocab.StateWaiting, Position: 3, Waiting: 10, ETASeconds: -1, Paused: true}),
		"checking": wait(TicketView{State: StateChecking}),
		"admitted": wait(TicketView{State: vocab.StateAdmitted, Token: "t", RedirectURL: "/shop", OrderableAt: now.Add(5 * time.Second)}),
		"expired":  wait(TicketView{State: vocab.StateExpired}),
		"closed":   wait(TicketView{State: vocab.StateClosed}),
		"bypassed": wait(TicketView{State: vocab.StateBypassed, AcceptURL: "/rooms/drop/accept"}),
		"accept":   AcceptPage(AcceptProps{Lang: ko, Room: "drop", Product: "운동화", ProductID: "p", Degraded: true}),
		"embed":    EmbedPage(EmbedProps{Lang: ko, Room: "drop", Parent: "https://shop.example", Now: now}),
		"notfound": NotFoundPage(ko, "drop"),
		"error":    ErrorPage(ko, 400, ""),
		"busy":     ErrorPage(ko, 503, ""),
		"nocheck":  NoCheckoutPage(ko, "drop"),
		"login":    AdminLoginPage(AdminLoginProps{Lang: ko, CSRF: "x", Error: "admin.login.wrong"}),
		"rooms": AdminRoomsPage(AdminRoomsProps{AdminPage: admin, Overview: AdminOverview{Health: health,
			Rooms: []AdminRoomSummary{{Room: "drop", Title: "Drop", Titles: map[string]string{"ko": "드롭"}, Activation: "always", Waiting: 5, Active: 100, Capacity: 100}}}}),
		"room":   AdminRoomPage(AdminRoomProps{AdminPage: admin, View: view, DegradeControl: true}),
		"form":   AdminRoomFormPage(AdminRoomFormProps{AdminPage: admin, Create: true, Values: map[string]string{}, Errors: map[string]string{}}),
		"delete": AdminDeletePage(AdminDeleteProps{AdminPage: admin, Room: "drop"}),
		"aerror": AdminErrorPage(AdminErrorProps{AdminPage: admin, Status: 500, Message: T(ko, "admin.error.csrf")}),
	}
}

// visibleText is what a page shows or says: its text (not scripts or
// styles) and the attributes read to a screen-reader user.
func visibleText(doc *goquery.Document) string {
	doc.Find("script, style").Remove()
	// Text marked as another language (a language's own name) is meant so.
	doc.Find("[lang]").Not("html, [lang=ko]").Remove()
	var b strings.Builder
	b.WriteString(doc.Text())
	doc.Find("[aria-label], [placeholder], [title], [alt]").Each(func(_ int, s *goquery.Selection) {
		for _, a := range []string{"aria-label", "placeholder", "title", "alt"} {
			if v, ok := s.Attr(a); ok {
				b.WriteString("\n" + v)
			}
		}
	})
	return b.String()
}

// TestKoreanPagesSpeakOnlyKorean: every page and state in Korean shows no
// catalogue key (a string missing from the catalogue shows its key) and no
// English string of the catalogue; room data, numbers and names that are
// the same in both languages (Redis, WebSocket) are allowed.
func TestKoreanPagesSpeakOnlyKorean(t *testing.T) {
	var english []string // catalogue strings Korean words differently
	for k, en := range catalogue[English] {
		if ko, ok := catalogue[Korean][k]; ok && ko != en && regexp.MustCompile(`[A-Za-z]{3}`).MatchString(en) {
			english = append(english, en)
		}
	}
	// The form names each choice's API value beside its words: "(off)".
	apiValue := regexp.MustCompile(`\([a-z_]+\)`)
	// Raw English in a template: two English words in a row.
	words := regexp.MustCompile(`[A-Za-z]{2,}(?:[ -][A-Za-z]{2,})+`)
	key := regexp.MustCompile(`\b(?:admin|waiting|eta|conn|admitted|expired|closed|bypassed|embed|checking|notfound|nocheckout|error|accept|page)\.[a-z_]+(?:\.[a-z_]+)*\b`)
	pages := koreanPages()
	maps.Copy(pages, koreanShopperPages())
	for name, c := range pages {
		text := apiValue.ReplaceAllString(visibleText(render(t, c)), "")
		for _, name := range []string{"Prometheus URL"} { // names, the same in Korean
			text = strings.ReplaceAll(text, name, "")
		}
		if m := words.FindAllString(text, 5); len(m) > 0 {
			t.Errorf("%s shows English words %q", name, m)
		}
		if m := key.FindAllString(text, 5); len(m) > 0 {
			t.Errorf("%s shows catalogue keys %q: a string is missing", name, m)
		}
		for _, en := range english {
			// Whole strings, and each sentence of longer ones.
			for part := range strings.SplitSeq(en, ". ") {
				if len(part) >= 12 && strings.Contains(text, part) {
					t.Errorf("%s shows English %q", name, part)
				}
			}
			if len(en) < 12 && regexp.MustCompile(`(^|[^A-Za-z])`+regexp.QuoteMeta(en)+`($|[^A-Za-z])`).MatchString(text) {
				t.Errorf("%s shows English %q", name, en)
			}
		}
	}
}

// TestLangsAreTheVocabulary: the catalogue's languages are the ones a room's
// texts may be given in.
func TestLangsAreTheVocabulary(t *testing.T) {
	if len(Langs) != len(vocab.Languages) {
		t.Fatalf("templates.Langs %v, vocab.Languages %v", Langs, vocab.Languages)
	}
	for i, l := range Langs {
		if string(l) != vocab.Languages[i] {
			t.Errorf("templates.Langs %v, vocab.Languages %v", Langs, vocab.Languages)
		}
	}
}
