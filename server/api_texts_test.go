package server_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/waitroom/waitroom/templates"
)

// TestAdminAPITextsPerLanguage: the admin API takes a text as a string or
// by language and answers each in the shape it was given; a bad language
// is named; the waiting page picks its language's text.
func TestAdminAPITextsPerLanguage(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"title": {"en": "Spring drop", "ko": "봄 드롭"}, "message": "Thanks for waiting.", "product_name": {"ko": "운동화"}}`)
	r := e.admin("GET", "/admin/api/rooms/sale", "")
	for _, want := range []string{`"title":{"en":"Spring drop","ko":"봄 드롭"}`, `"message":"Thanks for waiting."`, `"product_name":{"ko":"운동화"}`} {
		if !strings.Contains(r.raw, want) {
			t.Errorf("GET lacks %s: %s", want, r.raw)
		}
	}
	for body, field := range map[string]string{
		`{"title": {"fr": "Vente"}}`:                            "title.fr",
		`{"title": {}}`:                                         "title",
		`{"message": {"en": ""}}`:                               "message.en",
		`{"product_name": ["en"]}`:                              "product_name",
		`{"title": {"ko": "` + strings.Repeat("가", 201) + `"}}`: "title.ko",
	} {
		r := e.admin("PUT", "/admin/api/rooms/bad", body)
		wantError(t, r, 400, "invalid")
		if f, _ := r.body["error"].(map[string]any)["field"].(string); f != field {
			t.Errorf("%s: field %q, want %q", body, f, field)
		}
	}
	for lang, want := range map[string]string{"ko": "봄 드롭", "en": "Spring drop", "fr": "Spring drop"} {
		_, doc := e.page(e.browser(), "/rooms/sale", "Accept-Language", lang)
		if got := strings.TrimSpace(doc.Find(`[data-testid="room-title"]`).Text()); got != want {
			t.Errorf("Accept-Language %s: title %q, want %q", lang, got, want)
		}
	}
}

// TestErrorPageSpeaksThePageLanguage: an error the API words in English
// reaches a Korean page in the catalogue's Korean; an English page keeps
// the API's message.
func TestErrorPageSpeaksThePageLanguage(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{}`)
	// Ordering on the accept page while not degraded: 409 not_degraded.
	shown := func(lang string) (int, string) {
		r := e.do(e.browser(), "POST", "/rooms/sale/accept?lang="+lang, "quantity=1",
			"Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.raw))
		if err != nil {
			t.Fatal(err)
		}
		return r.status, strings.TrimSpace(doc.Find(`[data-testid="error-message"]`).Text())
	}
	if status, got := shown("ko"); status/100 != 4 || got != templates.T(templates.Korean, "error.body") {
		t.Errorf("Korean: %d %q, want a 4xx in Korean", status, got)
	}
	if status, got := shown("en"); status/100 != 4 || got == "" || got == templates.T(templates.English, "error.body") {
		t.Errorf("English: %d %q, want a 4xx with the API's message", status, got)
	}
}
