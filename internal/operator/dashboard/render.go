package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/apierr"
	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// lang is the page's language: ?lang= (remembered in a cookie, so links
// need not carry it), then that cookie, then Accept-Language.
func (d *Dashboard) lang(c echo.Context) templates.Lang {
	if l, ok := templates.ParseLang(c.QueryParam("lang")); ok {
		c.SetCookie(d.cookie(langCookie, string(l), 365*24*3600))
		return l
	}
	override := ""
	if ck, err := c.Cookie(langCookie); err == nil {
		override = ck.Value
	}
	return templates.Negotiate(c.Request().Header.Get("Accept-Language"), override)
}

// cookie is one of the dashboard's cookies: HttpOnly, SameSite=Strict, only
// sent to /admin, Secure behind https. maxAge < 0 deletes it.
func (d *Dashboard) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: d.d.Secure,
	}
}

// page is what every signed-in page shares.
func (d *Dashboard) page(c echo.Context) templates.AdminPage {
	sess, _ := c.Get(ctxSession).(session)
	h := d.health(c.Request().Context())
	return templates.AdminPage{Lang: d.lang(c), CSRF: sess.CSRF, Path: c.Request().URL.Path, Health: &h}
}

// wantsJSON: the script's requests ask for JSON; forms and links get pages.
func wantsJSON(c echo.Context) bool {
	r := c.Request()
	return strings.Contains(r.Header.Get("Accept"), "application/json") || r.Header.Get("X-CSRF-Token") != ""
}

// apiError is the admin API's error shape; Text is the same in the page's
// language, which the dashboard's script shows.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Text    string `json:"text,omitempty"`
}

// fail answers an error in the admin API's JSON shape or as a page, with
// e.Text (the page's words) or else e.Message.
func (d *Dashboard) fail(c echo.Context, status int, e apiError) error {
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "2")
	}
	if wantsJSON(c) {
		return c.JSON(status, map[string]apiError{"error": e})
	}
	text := e.Text
	if text == "" {
		text = e.Message
	}
	return render.Page(c, status, templates.AdminErrorPage(templates.AdminErrorProps{AdminPage: d.page(c), Status: status, Message: text}))
}

// failErr maps a store or check error to its answer, as the admin API does,
// with the words of the page's language.
func (d *Dashboard) failErr(c echo.Context, err error) error {
	if errors.Is(err, context.Canceled) {
		return nil // the client went away
	}
	lang := d.lang(c)
	if a, ok := apierr.Core(err); ok {
		var fe *queue.FieldError
		text := templates.T(lang, "admin.error.internal")
		switch {
		case errors.As(err, &fe):
			text = templates.AdminFieldMessage(lang, fe)
		case a == apierr.RoomNotFound:
			text = templates.T(lang, "admin.error.notfound")
		case a == apierr.Unavailable:
			text = templates.T(lang, "admin.error.unavailable")
		case a == apierr.Busy:
			text = templates.T(lang, "admin.error.busy")
		case a == apierr.NotScheduled:
			text = templates.T(lang, "admin.error.not_scheduled")
		}
		return d.fail(c, a.Status, apiError{Code: a.Code, Message: a.Message, Field: a.Field, Text: text})
	}
	d.log.Warn("dashboard: request failed", "remote", c.RealIP(), "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	return d.fail(c, http.StatusInternalServerError, apiError{Code: "internal", Message: "internal error", Text: templates.T(lang, "admin.error.internal")})
}

// roomParam validates a path's room id; a bad one is not a room.
func roomParam(c echo.Context) (string, bool) {
	room := c.Param("room")
	return room, queue.ValidRoomID(room)
}
