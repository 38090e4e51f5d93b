package server

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// handleRoomPage: GET /rooms/:room enters the visitor (same rules as the
// enter API) and shows the waiting page. It also works without JavaScript:
// the page refreshes itself at the tier interval, and each load is a status.
func handleRoomPage(line enterer, ids identities, deg degradeFlag) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		if deg.Degraded() {
			if _, err := bypassed(line, room, ""); err != nil {
				return err
			}
			return c.Redirect(http.StatusSeeOther, acceptURL(room)+langQuery(c))
		}
		ctx := c.Request().Context()
		s, err := line.Room(ctx, room)
		if err != nil {
			return err
		}
		identity, err := ids.forEnter(c, s, "")
		if err != nil {
			return err
		}
		if err := limitEnter(c, line, room, s, identity); err != nil {
			return err
		}
		t, s, err := line.Enter(ctx, room, identity)
		if err != nil {
			return err
		}
		v, err := newTicketJSON(line, t, &s)
		if err != nil {
			return err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		view, err := templates.TicketViewFromJSON(data)
		if err != nil {
			return err
		}
		now := line.Now()
		return render(c, http.StatusOK, templates.WaitingPage(templates.WaitingProps{
			Lang: pageLang(c), Room: room, Title: s.Title, Message: s.Message,
			Theme:      templates.Theme{Color: s.ThemeColor, LogoURL: s.LogoURL},
			TicketJSON: string(data), Ticket: view, EntryPosition: entryPosition(t),
			LastUpdate: now, Now: now,
		}))
	}
}

// langQuery keeps an explicit ?lang= across a redirect.
func langQuery(c echo.Context) string {
	if l := c.QueryParam("lang"); l != "" {
		return "?lang=" + url.QueryEscape(l)
	}
	return ""
}

func entryPosition(t queue.Ticket) int64 { return max(t.EntryPosition, t.Position) }
