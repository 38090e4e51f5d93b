package server

import (
	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/templates"
)

// pageLang is the page's language: ?lang=en|ko, else Accept-Language.
func pageLang(c echo.Context) templates.Lang {
	return templates.Negotiate(c.Request().Header.Get("Accept-Language"), c.QueryParam("lang"))
}

// renderError is the page form of an API error, for browser routes.
func renderError(c echo.Context, status int, message string) error {
	lang := pageLang(c)
	if status == 404 && c.Param("room") != "" {
		return render.Page(c, status, templates.NotFoundPage(lang, c.Param("room")))
	}
	if status >= 500 {
		message = "" // the page's own words: busy, retrying
	}
	if lang != templates.English && !templates.InCatalogue(lang, message) {
		message = "" // the API's words are English: the page's own, in lang
	}
	return render.Page(c, status, templates.ErrorPage(lang, status, message))
}
