package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/templates"
)

// acceptPageDeps is what the accept page needs.
type acceptPageDeps struct {
	line  enterer
	deg   degradeFlag
	ids   identities
	guard intentGuard
	store intentStore
}

func (d acceptPageDeps) props(c echo.Context, room string) (templates.AcceptProps, error) {
	s, ok := d.line.CachedSettings(room)
	if !ok {
		var err error
		if s, err = d.line.Settings(c.Request().Context(), room); err != nil {
			return templates.AcceptProps{}, err
		}
	}
	lang := pageLang(c)
	product := s.ProductName.In(string(lang))
	p := templates.AcceptProps{
		Lang: lang, Room: room, Title: s.Title.In(string(lang)), Message: s.Message.In(string(lang)),
		Theme:     templates.Theme{Color: s.ThemeColor, LogoURL: s.LogoURL},
		ProductID: s.ProductID, Product: product, Degraded: d.deg.Degraded(), MaxQuantity: s.MaxQuantity,
	}
	if s.BotProtection.PowOn() {
		p.ChallengeURL = "/api/rooms/" + room + "/challenge"
	}
	return p, nil
}

// handleAcceptPage: GET /rooms/:room/accept[?intent=ID]. While Redis is
// down, the visitor asks for what they came for; the page then shows the
// intent's progress (refreshing itself until it is final).
func handleAcceptPage(d acceptPageDeps) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		p, err := d.props(c, room)
		if err != nil {
			return err
		}
		if id := c.QueryParam("intent"); id != "" {
			in, err := ownIntent(c, d.line, d.ids, d.store, id)
			if isIntentNotFound(err) {
				// Not "room not found": the room is there, the request is not
				// (a broken link, another browser's, or someone else's).
				p.Unknown = true
				return render.Page(c, http.StatusNotFound, templates.AcceptPage(p))
			}
			if err != nil {
				return err
			}
			p.IntentID, p.Status, p.Reason = in.ID, string(in.Status), in.Reason
			p.Ordered = c.QueryParam("ordered") == "1" && in.Status.Holds()
		}
		return render.Page(c, http.StatusOK, templates.AcceptPage(p))
	}
}

// handleAcceptForm: POST /rooms/:room/accept, the page's form, so it works
// without JavaScript. The intent is written durably before the redirect.
func handleAcceptForm(d acceptPageDeps) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		p, err := d.props(c, room)
		if err != nil {
			return err
		}
		most := p.MaxQuantity
		if most <= 0 {
			most = templates.DefaultMaxQuantity
		}
		qty, err := strconv.ParseInt(c.FormValue("quantity"), 10, 64)
		if err != nil || qty < 1 || qty > most {
			p.Error = "quantity: choose 1 to " + strconv.FormatInt(most, 10)
			return render.Page(c, http.StatusBadRequest, templates.AcceptPage(p))
		}
		payload, _ := json.Marshal(map[string]any{"product": p.ProductID, "quantity": qty})
		in, err := acceptIntent(c, d.line, d.deg, d.ids, d.guard, d.store, room, payload, c.FormValue("pow"))
		if errors.Is(err, errNotDegraded) {
			return render.Page(c, http.StatusConflict, templates.AcceptPage(p))
		}
		if errors.Is(err, errOutboxWrite) {
			// Nothing was taken: the form comes back as the visitor filled
			// it, and the page's script sends it again after Retry-After.
			secs := int(outboxRetryAfter / time.Second)
			p.Error, p.Quantity, p.RetryAfter = templates.T(p.Lang, "accept.retry"), qty, secs
			c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
			return render.Page(c, http.StatusServiceUnavailable, templates.AcceptPage(p))
		}
		if err != nil {
			return err
		}
		q := url.Values{"intent": {in.ID}, "lang": {string(p.Lang)}}
		return c.Redirect(http.StatusSeeOther, acceptURL(room)+"?"+q.Encode())
	}
}

// isIntentNotFound reports whether err is ownIntent's answer for an intent
// this visitor has none of.
func isIntentNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == "intent_not_found"
}
