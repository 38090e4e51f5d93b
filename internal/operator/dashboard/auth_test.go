package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

func TestSignInSetsAStrictHttpOnlySessionCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		site := newSite(t, siteOptions{deps: func(d *dashboard.Deps) { d.Secure = secure }})
		b := site.browser()
		p := b.get("/admin")
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin/login?next=%2Fadmin" {
			t.Fatalf("signed out /admin: %d to %q", p.status, p.header.Get("Location"))
		}
		p = b.get("/admin/login")
		tok := attr(t, p, `input[name="csrf_token"]`, "value")
		p = b.post("/admin/login", url.Values{"csrf_token": {tok}, "token": {adminToken}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", p.status)
		}
		var session *http.Cookie
		for _, c := range (&http.Response{Header: p.header}).Cookies() {
			if c.Name == "wr_admin" {
				session = c
			}
		}
		if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure != secure || session.Path != "/admin" || session.MaxAge <= 0 {
			t.Fatalf("secure=%v: session cookie %+v", secure, session)
		}
		if p := b.get("/admin"); p.status != http.StatusOK || b.csrf == "" {
			t.Fatalf("signed in /admin: %d, csrf %q", p.status, b.csrf)
		}
	}
}

func TestSignInRefusals(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	tok := attr(t, b.get("/admin/login"), `input[name="csrf_token"]`, "value")

	p := b.post("/admin/login", url.Values{"csrf_token": {tok}, "token": {"wrong"}})
	if p.status != http.StatusUnauthorized || byTestID(t, p, "login-error") != templates.T(templates.English, "admin.login.wrong") {
		t.Errorf("wrong token: %d %q", p.status, p.body)
	}
	// The form's token must match its cookie: another site cannot sign us in.
	tok = attr(t, p, `input[name="csrf_token"]`, "value")
	p = b.post("/admin/login", url.Values{"csrf_token": {tok + "x"}, "token": {adminToken}})
	if p.status != http.StatusForbidden || byTestID(t, p, "login-error") != templates.T(templates.English, "admin.login.expired") {
		t.Errorf("sign-in form token mismatch: %d", p.status)
	}
	fresh := site.browser()
	p = fresh.post("/admin/login", url.Values{"token": {adminToken}})
	if p.status != http.StatusForbidden {
		t.Errorf("sign-in without the form: %d", p.status)
	}
	// Signed out, the script's requests and streams get 401, not a redirect.
	req, _ := http.NewRequest(http.MethodGet, site.url+"/admin/live", nil)
	if p := fresh.do(req); p.status != http.StatusUnauthorized || !strings.Contains(p.body, `"unauthorized"`) {
		t.Errorf("signed-out live JSON: %d %s", p.status, p.body)
	}
	// A room's page is a page even when its name says "live".
	if p := fresh.get("/admin/rooms/live-sale"); p.status != http.StatusSeeOther {
		t.Errorf("signed-out page of room live-sale: %d", p.status)
	}
	req, _ = http.NewRequest(http.MethodGet, site.url+"/admin/rooms/live-sale/live/events", nil)
	if p := fresh.do(req); p.status != http.StatusUnauthorized {
		t.Errorf("signed-out event stream: %d", p.status)
	}
	// A forged or tampered cookie is no session.
	u, _ := url.Parse(site.url + "/admin")
	fresh.c.Jar.SetCookies(u, []*http.Cookie{{Name: "wr_admin", Value: "AAAA.BBBB", Path: "/admin"}})
	if p := fresh.get("/admin"); p.status != http.StatusSeeOther {
		t.Errorf("forged cookie: %d", p.status)
	}
}

func TestSignInGoesBackToTheAskedPageButNeverOffTheDashboard(t *testing.T) {
	site := newSite(t, siteOptions{})
	for next, want := range map[string]string{
		"/admin/rooms/x?lang=ko": "/admin/rooms/x?lang=ko",
		"https://evil.example/":  "/admin",
		"//evil.example/admin":   "/admin",
		"/shop":                  "/admin",
		"/admin/login":           "/admin",
	} {
		b := site.browser()
		p := b.get("/admin/login?next=" + url.QueryEscape(next))
		tok := attr(t, p, `input[name="csrf_token"]`, "value")
		nextField := attr(t, p, `input[name="next"]`, "value")
		p = b.post("/admin/login", url.Values{"csrf_token": {tok}, "token": {adminToken}, "next": {nextField}})
		if got := p.header.Get("Location"); got != want {
			t.Errorf("next %q: sent to %q, want %q", next, got, want)
		}
	}
}

func TestSignOutEndsTheSession(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	u, _ := url.Parse(site.url + "/admin")
	old := b.c.Jar.Cookies(u)
	if p := b.postForm("/admin/logout", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin/login" {
		t.Fatalf("sign out: %d %q", p.status, p.header.Get("Location"))
	}
	if p := b.get("/admin"); p.status != http.StatusSeeOther {
		t.Errorf("after sign-out /admin: %d", p.status)
	}
	// The old cookie, replayed, is revoked.
	replay := site.browser()
	replay.c.Jar.SetCookies(u, old)
	if p := replay.get("/admin"); p.status != http.StatusSeeOther {
		t.Errorf("replayed cookie after sign-out: %d", p.status)
	}
}

// Every state-changing request needs the session's CSRF token: a form field
// or the X-CSRF-Token header. Without it (or with another's) nothing changes.
func TestStateChangesWithoutTheCSRFTokenAreRefused(t *testing.T) {
	site := newSite(t, siteOptions{})
	site.putRoom("drop", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	other := site.browser()
	other.signIn()

	posts := []struct {
		path string
		form url.Values
	}{
		{"/admin/rooms/drop/controls", url.Values{"paused": {"true"}}},
		{"/admin/rooms/drop/edit", url.Values{"capacity": {"5"}}},
		{"/admin/rooms/drop/delete", nil},
		{"/admin/create", url.Values{"room": {"new-room"}}},
		{"/admin/degrade", url.Values{"mode": {"on"}}},
		{"/admin/validate", url.Values{"capacity": {"0"}}},
		{"/admin/logout", nil},
	}
	for _, tc := range posts {
		for name, tok := range map[string]string{"none": "", "another session's": other.csrf, "garbled": b.csrf[:10]} {
			form := url.Values{}
			for k, v := range tc.form {
				form[k] = v
			}
			if tok != "" {
				form.Set("csrf_token", tok)
			}
			// As a form: a page saying why.
			p := b.post(tc.path, form)
			if p.status != http.StatusForbidden || byTestID(t, p, "admin-error-message") != templates.T(templates.English, "admin.error.csrf") {
				t.Errorf("%s with %s token as a form: %d", tc.path, name, p.status)
			}
			// As the script: JSON in the admin API's error shape.
			p = b.post(tc.path, tc.form, "Accept", "application/json", "X-CSRF-Token", tok)
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			if p.status != http.StatusForbidden || json.Unmarshal([]byte(p.body), &body) != nil || body.Error.Code != "csrf" {
				t.Errorf("%s with %s token as JSON: %d %s", tc.path, name, p.status, p.body)
			}
		}
	}
	if s := site.getRoom("drop"); s.Paused || s.Capacity != 100 {
		t.Errorf("settings changed without a token: %+v", s)
	}
	if _, err := site.line.StoredSettings(t.Context(), "new-room"); err == nil {
		t.Error("a room was created without a token")
	}
	if site.avail.State().Forced != nil {
		t.Error("the drill was set without a token")
	}
	// With the token the same request goes through.
	if p := b.post("/admin/rooms/drop/controls", url.Values{"paused": {"true"}}, "Accept", "application/json", "X-CSRF-Token", b.csrf); p.status != http.StatusOK {
		t.Errorf("with the token: %d %s", p.status, p.body)
	}
	if !site.getRoom("drop").Paused {
		t.Error("not paused with the token")
	}
}

func TestTheAdminAPIStaysBearerOnly(t *testing.T) {
	site := newSite(t, siteOptions{})
	b := site.browser()
	b.signIn()
	req, _ := http.NewRequest(http.MethodGet, site.url+"/admin/api/rooms", nil)
	if p := b.do(req); p.status != http.StatusUnauthorized {
		t.Errorf("/admin/api with a dashboard session and no bearer: %d", p.status)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if p := b.do(req); p.status != http.StatusOK {
		t.Errorf("/admin/api with the bearer: %d", p.status)
	}
	req, _ = http.NewRequest(http.MethodGet, site.url+"/admin/nothing-here", nil)
	if p := b.do(req); p.status != http.StatusNotFound {
		t.Errorf("unknown /admin path: %d", p.status)
	}
}
