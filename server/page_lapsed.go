package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/templates"
)

// lapsedPage: a gate that refused a token whose slot lapsed (no_show, idle)
// sends the visitor to the waiting page with ?lapsed=<reason>. The page says
// so and offers to join again (?again=1) instead of taking a new place at
// once: the visitor decides, and a place that needs proof of work is not
// paid for unasked. It reports whether it answered. The reason is one of
// two words, never echoed text.
func lapsedPage(c echo.Context, line enterer, room string) (bool, error) {
	reason := c.QueryParam("lapsed")
	if !vocab.Lapsed(reason) || c.QueryParam("again") != "" {
		return false, nil
	}
	s, err := line.Settings(c.Request().Context(), room)
	if err != nil {
		return true, err
	}
	lang := pageLang(c)
	now := line.Now()
	c.Response().Header().Set("Cache-Control", "no-store")
	return true, render.Page(c, http.StatusOK, templates.WaitingPage(templates.WaitingProps{
		Lang: lang, Room: room, Title: s.Title.In(string(lang)), Message: s.Message.In(string(lang)),
		Theme:      templates.Theme{Color: s.ThemeColor, LogoURL: s.LogoURL},
		Ticket:     templates.TicketView{State: vocab.StateExpired, Reason: reason},
		LastUpdate: now, Now: now,
	}))
}
