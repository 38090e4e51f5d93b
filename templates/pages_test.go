package templates

import (
	"strings"
	"testing"
)

func TestNotFoundPage(t *testing.T) {
	for lang, want := range map[Lang][2]string{
		English: {"Waiting room not found", "There is no waiting room called “spring-drop”."},
		Korean:  {"대기실을 찾을 수 없습니다", "“spring-drop” 대기실이 없습니다."},
	} {
		doc := render(t, NotFoundPage(lang, "spring-drop"))
		got := text(t, doc, "not-found")
		if !strings.Contains(got, want[0]) || !strings.Contains(got, want[1]) {
			t.Errorf("%s: not-found = %q", lang, got)
		}
		if l, _ := doc.Find("html").Attr("lang"); l != string(lang) {
			t.Errorf("%s: html lang %q", lang, l)
		}
		if _, _, ok := refresh(doc); ok {
			t.Errorf("%s: a missing room must not refresh", lang)
		}
		if doc.Find("script[src]").Length() != 0 {
			t.Errorf("%s: not-found page loads the waiting script", lang)
		}
	}
}

func TestErrorPageServerFaultRetries(t *testing.T) {
	for lang, want := range map[Lang][2]string{
		English: {"The waiting room is busy", "We're retrying automatically."},
		Korean:  {"대기실이 혼잡합니다", "자동으로 다시 시도하고 있습니다."},
	} {
		doc := render(t, ErrorPage(lang, 503, ""))
		if got := doc.Find("h1").Text(); got != want[0] {
			t.Errorf("%s: heading %q", lang, got)
		}
		if got := text(t, doc, "error-message"); !strings.Contains(got, want[1]) {
			t.Errorf("%s: message %q", lang, got)
		}
		// No client script here, so the refresh must work with script on too.
		content, noscript, ok := refresh(doc)
		if !ok || content != "5" || noscript {
			t.Errorf("%s: refresh %q (noscript %v, present %v), want a plain 5", lang, content, noscript, ok)
		}
		if got := doc.Find(`[data-testid="error"]`).AttrOr("data-status", ""); got != "503" {
			t.Errorf("%s: data-status %q", lang, got)
		}
	}
}

func TestErrorPageClientErrorAndMessage(t *testing.T) {
	doc := render(t, ErrorPage(English, 400, "That link is not valid."))
	if got := doc.Find("h1").Text(); got != "Something went wrong" {
		t.Errorf("heading %q", got)
	}
	if got := text(t, doc, "error-message"); got != "That link is not valid." {
		t.Errorf("message %q", got)
	}
	if !strings.Contains(text(t, doc, "error"), "Error 400") {
		t.Errorf("status not shown: %q", text(t, doc, "error"))
	}
	if _, _, ok := refresh(doc); ok {
		t.Error("a client error must not refresh")
	}
	if got := text(t, render(t, ErrorPage(Korean, 404, "")), "error-message"); got != "잠시 후 다시 시도해 주세요." {
		t.Errorf("ko default message %q", got)
	}
}
