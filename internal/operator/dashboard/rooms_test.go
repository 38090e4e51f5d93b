package dashboard_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// apiMessage is what the admin API answers for a settings body: the
// dashboard's inline messages must be the same words.
func apiMessage(t *testing.T, body string) string {
	t.Helper()
	_, err := queue.ParseSettings([]byte(body))
	var fe *queue.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("ParseSettings(%s) = %v, want a field error", body, err)
	}
	return fe.Error()
}

// saidIn is what the dashboard says in lang for a settings body the API
// refuses: the same rule, in the catalogue's words.
func saidIn(t *testing.T, lang templates.Lang, body string) string {
	t.Helper()
	_, err := queue.ParseSettings([]byte(body))
	var fe *queue.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("ParseSettings(%s) = %v, want a field error", body, err)
	}
	return templates.AdminFieldMessage(lang, fe)
}

func TestCreateShowsEveryBadFieldWithTheAPIsRule(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	if p := b.get("/admin/create"); p.status != http.StatusOK || !shown(p, "field-room") || shown(p, "error-capacity") {
		t.Fatalf("create form: %d", p.status)
	}
	form := url.Values{
		"room": {"Bad Room"}, "capacity": {"0"}, "batch_size": {"ten"}, "batch_interval_ms": {"10"},
		"target_url": {"ftp://x"}, "tiers.max_position": {""}, "tiers.interval_ms": {"5"}, "title": {"Kept as typed"},
	}
	p := b.postForm("/admin/create", form)
	if p.status != http.StatusBadRequest || !shown(p, "form-error") {
		t.Fatalf("bad create: %d", p.status)
	}
	want := map[string]string{
		"room":              templates.T(templates.English, "admin.rule.room_id"),
		"capacity":          saidIn(t, templates.English, `{"capacity": 0}`),
		"batch_size":        saidIn(t, templates.English, `{"batch_size": "ten"}`),
		"batch_interval_ms": saidIn(t, templates.English, `{"batch_interval_ms": 10}`),
		"target_url":        saidIn(t, templates.English, `{"target_url": "ftp://x"}`),
		"tiers":             saidIn(t, templates.English, `{"tiers": [{"max_position": null, "interval_ms": 5}]}`),
	}
	for field, msg := range want {
		if got := byTestID(t, p, "error-"+field); got != msg {
			t.Errorf("%s: %q, want %q", field, got, msg)
		}
	}
	for _, ok := range []string{"title", "message", "jitter_ms"} {
		if shown(p, "error-"+ok) {
			t.Errorf("%s marked bad", ok)
		}
	}
	if v := attr(t, p, `[data-testid="field-title"]`, "value"); v != "Kept as typed" {
		t.Errorf("title not kept: %q", v)
	}
	if _, err := site.line.StoredSettings(t.Context(), "bad-room"); err == nil {
		t.Error("a bad room was stored")
	}
}

func TestCreateEditAndDeleteARoom(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	p := b.postForm("/admin/create", url.Values{
		"room": {"spring-drop"}, "title": {"Spring drop"}, "capacity": {"50"}, "batch_size": {"5"},
		"paused": {"true"}, "activation": {"always"}, "user_secret": {"0123456789abcdef-secret"},
	})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin/rooms/spring-drop" {
		t.Fatalf("create: %d %q %.500s", p.status, p.header.Get("Location"), p.body)
	}
	s := site.getRoom("spring-drop")
	if s.Title.String() != "Spring drop" || s.Capacity != 50 || s.BatchSize != 5 || !s.Paused || s.BatchIntervalMS != 200 || s.UserSecret == "" {
		t.Errorf("stored %+v", s)
	}
	if p := b.postForm("/admin/create", url.Values{"room": {"spring-drop"}}); p.status != http.StatusBadRequest || byTestID(t, p, "error-room") != templates.T(templates.English, "admin.rule.room_taken") {
		t.Errorf("create again: %d", p.status)
	}

	// The list and the room page.
	p = b.get("/admin")
	row := p.doc.Find(`[data-testid="room-row"][data-room="spring-drop"]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "Spring drop") || !strings.Contains(row.Text(), templates.T(templates.English, "admin.state.paused")) {
		t.Errorf("rooms list row: %q", row.Text())
	}
	p = b.get("/admin/rooms/spring-drop")
	if p.status != http.StatusOK || byTestID(t, p, "stat-waiting") != "0" || byTestID(t, p, "stat-active") != "0 / 50" ||
		byTestID(t, p, "control-pause") != templates.T(templates.English, "admin.control.resume") {
		t.Fatalf("room page: %d %q %q", p.status, byTestID(t, p, "stat-active"), byTestID(t, p, "control-pause"))
	}
	var series []map[string]any
	if err := json.Unmarshal([]byte(p.doc.Find("#admin-series").Text()), &series); err != nil {
		t.Errorf("series JSON: %v", err)
	}

	// Edit: the form shows what is stored; a blank secret keeps it.
	p = b.get("/admin/rooms/spring-drop/edit")
	if v := attr(t, p, `[data-testid="field-capacity"]`, "value"); v != "50" {
		t.Errorf("edit form capacity %q", v)
	}
	if _, ok := p.doc.Find(`[data-testid="field-paused"]`).Attr("checked"); !ok {
		t.Error("edit form: paused not checked")
	}
	if v, _ := p.doc.Find(`[data-testid="field-user_secret"]`).Attr("value"); v != "" {
		t.Error("the secret is shown in the page")
	}
	form := url.Values{}
	for k, v := range map[string]string{"title": "Spring drop II", "capacity": "60", "batch_size": "5", "target_url": "/shop", "activation": "off"} {
		form.Set(k, v)
	}
	if p := b.postForm("/admin/rooms/spring-drop/edit", form); p.status != http.StatusSeeOther {
		t.Fatalf("edit: %d %.500s", p.status, p.body)
	}
	s = site.getRoom("spring-drop")
	if s.Title.String() != "Spring drop II" || s.Capacity != 60 || s.Paused || s.Activation != "off" || s.UserSecret != "0123456789abcdef-secret" {
		t.Errorf("after edit %+v", s)
	}
	form.Set("user_secret_clear", "true")
	if p := b.postForm("/admin/rooms/spring-drop/edit", form); p.status != http.StatusSeeOther || site.getRoom("spring-drop").UserSecret != "" {
		t.Errorf("clearing the secret: %d", p.status)
	}
	form.Set("capacity", "-1")
	if p := b.postForm("/admin/rooms/spring-drop/edit", form); p.status != http.StatusBadRequest || byTestID(t, p, "error-capacity") != saidIn(t, templates.English, `{"capacity": -1}`) {
		t.Errorf("bad edit: %d", p.status)
	}

	// Delete asks first.
	p = b.get("/admin/rooms/spring-drop/delete")
	if p.status != http.StatusOK || !shown(p, "confirm-delete") {
		t.Fatalf("delete page: %d", p.status)
	}
	if _, err := site.line.StoredSettings(t.Context(), "spring-drop"); err != nil {
		t.Fatal("the confirmation page deleted the room")
	}
	if p := b.postForm("/admin/rooms/spring-drop/delete", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin" {
		t.Fatalf("delete: %d", p.status)
	}
	if _, err := site.line.StoredSettings(t.Context(), "spring-drop"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if p := b.get("/admin/rooms/spring-drop"); p.status != http.StatusNotFound {
		t.Errorf("deleted room page: %d", p.status)
	}
}

func TestValidateAnswersTheChecksAsJSON(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("taken", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	p := b.post("/admin/validate", url.Values{"room": {"taken"}, "capacity": {"0"}, "jitter_ms": {"5"}},
		"Accept", "application/json", "X-CSRF-Token", b.csrf)
	var body struct{ Errors map[string]string }
	if err := json.Unmarshal([]byte(p.body), &body); err != nil || p.status != http.StatusOK {
		t.Fatalf("validate: %d %s", p.status, p.body)
	}
	want := map[string]string{"room": templates.T(templates.English, "admin.rule.room_taken"), "capacity": saidIn(t, templates.English, `{"capacity": 0}`)}
	if len(body.Errors) != len(want) || body.Errors["room"] != want["room"] || body.Errors["capacity"] != want["capacity"] {
		t.Errorf("errors %v, want %v", body.Errors, want)
	}
}

func TestPagesSpeakKoreanAndRememberIt(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("drop", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	p := b.get("/admin?lang=ko")
	if lang, _ := p.doc.Find("html").Attr("lang"); lang != "ko" || !strings.Contains(p.doc.Find("h1").Text(), templates.T(templates.Korean, "admin.rooms.heading")) {
		t.Fatalf("lang %q, h1 %q", lang, p.doc.Find("h1").Text())
	}
	p = b.get("/admin/rooms/drop")
	if got := byTestID(t, p, "room-heading"); got != "“drop” 대기실" {
		t.Errorf("room heading %q", got)
	}
	if got := byTestID(t, p, "stat-admitted-rate"); got != templates.T(templates.Korean, "admin.na") {
		t.Errorf("rate before two samples: %q", got)
	}
	var strs map[string]string
	if err := json.Unmarshal([]byte(p.doc.Find("#admin-strings").Text()), &strs); err != nil || strs["admin.conn.ws"] != templates.T(templates.Korean, "admin.conn.ws") {
		t.Errorf("client strings: %v", err)
	}
}

// TestEditKeepsAllowedEmbedders: the embedders are a form field like the
// rest, shown and sent back, so editing a room in the dashboard keeps them.
func TestEditKeepsAllowedEmbedders(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	p := b.postForm("/admin/create", url.Values{"room": {"framed"}, "activation": {"always"},
		"allowed_embedders": {"https://shop.example, http://localhost:8081"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create: %d %.500s", p.status, p.body)
	}
	if got := site.getRoom("framed").AllowedEmbedders; strings.Join(got, " ") != "https://shop.example http://localhost:8081" {
		t.Fatalf("stored embedders %q", got)
	}
	p = b.get("/admin/rooms/framed/edit")
	shownValue := attr(t, p, `[data-testid="field-allowed_embedders"]`, "value")
	if shownValue != "https://shop.example, http://localhost:8081" {
		t.Fatalf("edit form shows %q", shownValue)
	}
	form := url.Values{"title": {"Framed"}, "activation": {"always"}, "allowed_embedders": {shownValue}}
	if p := b.postForm("/admin/rooms/framed/edit", form); p.status != http.StatusSeeOther {
		t.Fatalf("edit: %d %.500s", p.status, p.body)
	}
	if got := site.getRoom("framed"); got.Title.String() != "Framed" || len(got.AllowedEmbedders) != 2 {
		t.Fatalf("after edit %+v", got)
	}
	form.Set("allowed_embedders", "https://shop.example/path")
	if p := b.postForm("/admin/rooms/framed/edit", form); p.status != http.StatusBadRequest {
		t.Fatalf("an embedder that is no origin: %d", p.status)
	}
}
