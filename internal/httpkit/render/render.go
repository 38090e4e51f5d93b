// Package render writes templ pages for the server and the dashboard alike.
package render

import (
	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// Page writes a templ component as an uncached HTML page.
func Page(c echo.Context, status int, cmp templ.Component) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(status)
	return cmp.Render(c.Request().Context(), c.Response())
}
