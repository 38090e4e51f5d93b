package dashboard

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/throttle"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/templates"
)

const ctxSession = "dashboard.session"

// requireSession lets signed-in requests through; others are sent to sign
// in, or answered 401 when they ask for JSON.
func (d *Dashboard) requireSession(next echo.HandlerFunc) echo.HandlerFunc {
	return d.session(next, true)
}

// requireSessionAPI is requireSession for what no one navigates to (the
// live streams and their polling, posts): always 401 when signed out.
func (d *Dashboard) requireSessionAPI(next echo.HandlerFunc) echo.HandlerFunc {
	return d.session(next, false)
}

func (d *Dashboard) session(next echo.HandlerFunc, page bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		if ck, err := c.Cookie(sessionCookie); err == nil {
			if sess, ok := d.sessions.check(c.Request().Context(), ck.Value); ok {
				c.Set(ctxSession, sess)
				c.Response().Header().Set("Cache-Control", "no-store")
				return next(c)
			}
		}
		r := c.Request()
		if page && r.Method == http.MethodGet && !wantsJSON(c) {
			return c.Redirect(http.StatusSeeOther, "/admin/login?next="+url.QueryEscape(r.URL.RequestURI()))
		}
		return c.JSON(http.StatusUnauthorized, map[string]apiError{"error": {Code: "unauthorized", Message: "sign in to the dashboard first"}})
	}
}

// requireCSRF refuses a state-changing request without the session's token,
// as the form field csrf_token or the X-CSRF-Token header.
func (d *Dashboard) requireCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sess, _ := c.Get(ctxSession).(session)
		got := c.Request().Header.Get("X-CSRF-Token")
		if got == "" {
			got = c.FormValue("csrf_token")
		}
		if !checkCSRF(sess, got) {
			return d.fail(c, http.StatusForbidden, apiError{Code: "csrf", Message: "missing or wrong CSRF token",
				Text: templates.T(d.lang(c), "admin.error.csrf")})
		}
		return next(c)
	}
}

// handleLoginPage: GET /admin/login. The form carries a CSRF token the
// server signed for its cookie, so another site can neither sign a
// browser in nor make up a pair of its own.
func (d *Dashboard) handleLoginPage(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil {
		if _, ok := d.sessions.check(c.Request().Context(), ck.Value); ok {
			return c.Redirect(http.StatusSeeOther, safeNext(c.QueryParam("next")))
		}
	}
	return d.loginPage(c, http.StatusOK, "")
}

func (d *Dashboard) loginPage(c echo.Context, status int, errKey string) error {
	nonce, tok := d.sessions.loginForm()
	c.SetCookie(d.cookie(loginCookie, nonce, int(loginTTL.Seconds())))
	next := c.QueryParam("next")
	if next == "" {
		next = c.FormValue("next")
	}
	return render.Page(c, status, templates.AdminLoginPage(templates.AdminLoginProps{
		Lang: d.lang(c), CSRF: tok, Next: safeNext(next), Error: errKey,
	}))
}

// handleLogin: POST /admin/login with the admin token starts a session.
// The sign-in form's CSRF is checked first (a made-up form is no attempt);
// then the token, before any count: the right one always signs in, however
// many wrong ones came from wherever. Only wrong ones are counted, per
// client network; a network past its allowance is answered 429.
func (d *Dashboard) handleLogin(c echo.Context) error {
	ck, err := c.Cookie(loginCookie)
	if err != nil || !d.sessions.checkLogin(ck.Value, c.FormValue("csrf_token")) {
		return d.loginPage(c, http.StatusForbidden, "admin.login.expired")
	}
	if !adminops.RightToken(d.d.AdminToken, c.FormValue("token")) {
		wait, ok := d.d.Failures.Failed(c.Request().Context(), clientip.Bucket(c.RealIP()))
		if !ok {
			c.Response().Header().Set("Retry-After", throttle.RetryAfter(wait))
			if wantsJSON(c) {
				return c.JSON(http.StatusTooManyRequests, map[string]apiError{"error": {Code: "rate_limited",
					Message: "too many wrong admin tokens from your network; retry after Retry-After seconds"}})
			}
			return d.loginPage(c, http.StatusTooManyRequests, "admin.login.throttled")
		}
		d.log.Warn("dashboard: failed sign-in", "remote", c.RealIP())
		return d.loginPage(c, http.StatusUnauthorized, "admin.login.wrong")
	}
	sess, value := d.sessions.issue()
	c.SetCookie(d.cookie(sessionCookie, value, int(d.d.SessionTTL.Seconds())))
	c.SetCookie(d.cookie(loginCookie, "", -1))
	d.log.Info("dashboard: signed in", "remote", c.RealIP(), "session_expires", sess.Exp)
	return c.Redirect(http.StatusSeeOther, safeNext(c.FormValue("next")))
}

// handleLogout: POST /admin/logout ends the session on every server.
func (d *Dashboard) handleLogout(c echo.Context) error {
	sess, _ := c.Get(ctxSession).(session)
	if err := d.sessions.revoke(c.Request().Context(), sess); err != nil {
		d.log.Warn("dashboard: signed out on this server only until Redis answers", "remote", c.RealIP(), "err", err)
	} else {
		d.log.Info("dashboard: signed out", "remote", c.RealIP())
	}
	c.SetCookie(d.cookie(sessionCookie, "", -1))
	return c.Redirect(http.StatusSeeOther, "/admin/login")
}

// safeNext keeps a post-sign-in redirect on the dashboard: a path under
// /admin, never another host.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.IsAbs() || u.Host != "" || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) ||
		!(u.Path == "/admin" || strings.HasPrefix(u.Path, "/admin/")) || strings.HasPrefix(u.Path, "/admin/login") {
		return "/admin"
	}
	return u.RequestURI()
}
