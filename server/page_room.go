package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// handleRoomPage: GET /rooms/:room enters the visitor (same rules as the
// enter API) and shows the waiting page. It also works without JavaScript:
// the page refreshes itself at the tier interval, and each load is a status.
// With proof of work on, a visitor without a place gets the checking step
// instead: its script solves the challenge and enters through the API.
func handleRoomPage(line enterer, ids identities, deg degradeFlag, g powGate, waiters *queue.Waiters) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		if !topLevelNavigation(c.Request()) {
			// An <img>, <script> or fetch from any site: no place, no ticket.
			return c.NoContent(http.StatusForbidden)
		}
		if deg.Degraded() {
			if _, err := bypassed(line, room, ""); err != nil {
				return err
			}
			return c.Redirect(http.StatusSeeOther, acceptURL(room)+langQuery(c))
		}
		if done, err := lapsedPage(c, line, room); done {
			return err
		}
		t, s, err := takePlace(c, line, ids, g, waiters, room, "", "", false)
		if done, err := redirectOrdered(c, room, err); done {
			return err
		}
		lang := pageLang(c)
		if errors.Is(err, queue.ErrProofRequired) {
			now := line.Now()
			return render.Page(c, http.StatusOK, templates.WaitingPage(templates.WaitingProps{
				Lang: lang, Room: room, Title: s.Title.In(string(lang)), Message: s.Message.In(string(lang)),
				Theme:        templates.Theme{Color: s.ThemeColor, LogoURL: s.LogoURL},
				Ticket:       templates.TicketView{State: templates.StateChecking},
				ChallengeURL: "/api/rooms/" + room + "/challenge",
				LastUpdate:   now, Now: now,
			}))
		}
		if err != nil {
			return err
		}
		v, err := line.View(t, &s)
		if err != nil {
			return err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		view, err := templates.TicketViewOf(v)
		if err != nil {
			return err
		}
		view.SoldOutMessage = v.SoldOutMessage.In(string(lang))
		now := line.Now()
		return render.Page(c, http.StatusOK, templates.WaitingPage(templates.WaitingProps{
			Lang: lang, Room: room, Title: s.Title.In(string(lang)), Message: s.Message.In(string(lang)),
			Theme:      templates.Theme{Color: s.ThemeColor, LogoURL: s.LogoURL},
			TicketJSON: string(data), Ticket: view, EntryPosition: entryPosition(t),
			LastUpdate: now, Now: now,
			HeldFor:      time.Duration(s.SessionTTLS) * time.Second,
			ArriveWithin: time.Duration(s.ArrivalWindowS) * time.Second,
			ShopURL:      s.ShopURL,
		}))
	}
}

// topLevelNavigation reports whether a page load is a visitor's own
// navigation: Sec-Fetch-Mode navigate (or Sec-Fetch-Dest document), or no
// fetch metadata at all (older browsers, curl). Subresource loads (image,
// script, style, fetch, …) from any site never take a place.
func topLevelNavigation(r *http.Request) bool {
	mode, dest := r.Header.Get("Sec-Fetch-Mode"), r.Header.Get("Sec-Fetch-Dest")
	if mode == "" && dest == "" {
		return true
	}
	return (mode == "" || mode == "navigate") && (dest == "" || dest == "document")
}

// langQuery keeps an explicit ?lang= across a redirect.
func langQuery(c echo.Context) string {
	if l := c.QueryParam("lang"); l != "" {
		return "?lang=" + url.QueryEscape(l)
	}
	return ""
}

func entryPosition(t queue.Ticket) int64 { return max(t.EntryPosition, t.Position) }
