package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// TestBrowserTextsPerLanguage: a room's title, message and product name
// given per language reach each page in the page's language, whether the
// browser asks (Accept-Language) or the visitor switches (?lang=); a text
// without the page's language falls back to English, then to any.
func TestBrowserTextsPerLanguage(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	site := startBrowserSite(t, browserBlock{})
	const parent = "https://shop.example"
	s := browserRoomSettings()
	s.Title = queue.TextByLang(map[string]string{"en": "Spring drop", "ko": "봄 드롭"})
	s.Message = queue.TextByLang(map[string]string{"en": "Thanks for waiting.", "ko": "기다려 주셔서 감사합니다."})
	s.ProductID, s.ProductName = "sneaker", queue.TextByLang(map[string]string{"en": "Sneaker", "ko": "운동화"})
	s.AllowedEmbedders = []string{parent}
	site.putRoom(s)
	fb := browserRoomSettings()
	fb.Title = queue.TextByLang(map[string]string{"en": "Only English"})
	fb.Message = queue.TextByLang(map[string]string{"ko": "한국어만"})
	if err := site.line.PutRoom(context.Background(), "fallback", fb); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var v struct {
		Pages []struct {
			Locale, Name, Lang, DocTitle string
			Title, Message, Product      *string
		}
		PageErrors []string
	}
	sc := kit.startScript(ctx, t, "texts", site, "FALLBACK_ROOM=fallback", "PARENT="+parent)
	sc.awaitReady(ctx, &struct{}{})
	on := true
	site.avail.Force(&on) // the accept page of degraded mode names the product
	sc.wait(&v)
	if len(v.PageErrors) > 0 {
		t.Errorf("page errors %q", v.PageErrors)
	}
	type want struct{ lang, title, message, product string }
	ko := want{"ko", "봄 드롭", "기다려 주셔서 감사합니다.", ""}
	en := want{"en", "Spring drop", "Thanks for waiting.", ""}
	wants := map[string]map[string]want{
		"ko-KR": {"waiting": ko, "waiting-ko": ko, "waiting-en": en, "fallback": {"ko", "Only English", "한국어만", ""},
			"accept": {"ko", "봄 드롭", "", "운동화"}, "embed": ko},
		"en-US": {"waiting": en, "waiting-ko": ko, "waiting-en": en, "fallback": {"en", "Only English", "한국어만", ""},
			"accept": {"en", "Spring drop", "", "Sneaker"}, "embed": en},
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	seen := 0
	for _, p := range v.Pages {
		w, ok := wants[p.Locale][p.Name]
		if !ok {
			t.Errorf("unexpected page %s %s", p.Locale, p.Name)
			continue
		}
		seen++
		got := want{p.Lang, str(p.Title), str(p.Message), str(p.Product)}
		if p.Name == "accept" {
			got.message = "" // the accept page has no message
		}
		if got != w {
			t.Errorf("%s %s: %+v, want %+v", p.Locale, p.Name, got, w)
		}
	}
	if seen != 12 {
		t.Errorf("%d pages seen, want 12", seen)
	}
}
