package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// texts are the per-language settings of s as the API writes them.
func texts(t *testing.T, s queue.Settings) string {
	t.Helper()
	b, err := json.Marshal(map[string]queue.LocalText{"title": s.Title, "message": s.Message, "product_name": s.ProductName})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFormEditsTextsPerLanguage: the form has an English and a Korean input
// per text; an unchanged edit keeps both shapes (a plain string stays one),
// and what is typed becomes a string or an object by language.
func TestFormEditsTextsPerLanguage(t *testing.T) {
	site := newSite(t, siteOptions{})
	s := queue.DefaultSettings()
	s.Title = queue.TextByLang(map[string]string{"en": "Spring drop", "ko": "봄 드롭"})
	s.Message = queue.TextByLang(map[string]string{"ko": "기다려 주세요"})
	s.ProductName = queue.Text("Sneaker")
	site.putRoom("texts", s)
	b := site.browser()
	b.signIn()
	p := b.get("/admin/rooms/texts/edit")
	for id, want := range map[string]string{"field-title": "Spring drop", "field-title.ko": "봄 드롭", "field-product_name": "Sneaker", "field-product_name.ko": ""} {
		if got := attr(t, p, `[data-testid="`+id+`"]`, "value"); got != want {
			t.Errorf("%s shows %q, want %q", id, got, want)
		}
	}
	if got := strings.TrimSpace(p.doc.Find(`[data-testid="field-message.ko"]`).Text()); got != "기다려 주세요" {
		t.Errorf("Korean message shows %q", got)
	}
	if lang, _ := p.doc.Find(`[data-testid="field-title.ko"]`).Attr("lang"); lang != "ko" {
		t.Errorf("the Korean input is lang %q", lang)
	}
	if p := b.postForm("/admin/rooms/texts/edit", formOf(t, p)); p.status != http.StatusSeeOther {
		t.Fatalf("unchanged edit: %d %.1000s", p.status, p.body)
	}
	if got, want := texts(t, site.getRoom("texts")), texts(t, s); got != want {
		t.Errorf("an unchanged edit turned %s into %s", want, got)
	}

	for i, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"title": {" Sale "}}, `{"message":"","product_name":"","title":"Sale"}`},
		{url.Values{"title": {"Sale"}, "title.ko": {"Sale"}}, `{"message":"","product_name":"","title":"Sale"}`},
		{url.Values{"title": {"Sale"}, "title.ko": {"세일"}, "product_name.ko": {"운동화"}},
			`{"message":"","product_name":{"ko":"운동화"},"title":{"en":"Sale","ko":"세일"}}`},
		{url.Values{"message": {"Two lines,\nkept "}, "message.ko": {"두 줄\n"}},
			`{"message":{"en":"Two lines,\nkept ","ko":"두 줄\n"},"product_name":"","title":""}`},
	} {
		room := "texts-" + string(rune('a'+i))
		c.form.Set("room", room)
		if p := b.postForm("/admin/create", c.form); p.status != http.StatusSeeOther {
			t.Errorf("%v: %d %.1000s", c.form, p.status, p.body)
			continue
		}
		if got := texts(t, site.getRoom(room)); got != c.want {
			t.Errorf("%v stored %s, want %s", c.form, got, c.want)
		}
	}

	// A Korean title too long is named at the title, by its language, in the API's rule.
	long := strings.Repeat("가", 201)
	p = b.postForm("/admin/create", url.Values{"room": {"texts-long"}, "title": {"Sale"}, "title.ko": {long}})
	if p.status != http.StatusBadRequest {
		t.Fatalf("long Korean title: %d", p.status)
	}
	if got, want := byTestID(t, p, "error-title"), saidIn(t, templates.English, `{"title": {"en": "Sale", "ko": "`+long+`"}}`); got != want || !strings.HasPrefix(got, "Korean: ") {
		t.Errorf("error %q, want %q", got, want)
	}
	if got := attr(t, p, `[data-testid="field-title.ko"]`, "value"); got != long {
		t.Errorf("the Korean title was not kept as typed")
	}
}
