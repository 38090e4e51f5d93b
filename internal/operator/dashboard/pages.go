package dashboard

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// handleRooms: GET /admin lists the rooms as last sampled, so the page
// works while Redis is down.
func (d *Dashboard) handleRooms(c echo.Context) error {
	p := d.page(c)
	return render.Page(c, http.StatusOK, templates.AdminRoomsPage(templates.AdminRoomsProps{
		AdminPage: p, Overview: d.overview(c.Request().Context()),
	}))
}

// handleRoomPage: GET /admin/rooms/:room shows the room with the last 15
// minutes for the charts.
func (d *Dashboard) handleRoomPage(c echo.Context) error {
	return d.roomPage(c, http.StatusOK, nil, c.QueryParam("saved") == "1")
}

// roomPage renders the room page, with a control's messages when a form
// posted without script failed.
func (d *Dashboard) roomPage(c echo.Context, status int, errs map[string]string, saved bool) error {
	room, ok := roomParam(c)
	if !ok {
		return d.failErr(c, queue.ErrRoomNotFound)
	}
	rv, err := d.roomView(c.Request().Context(), room, true)
	if err != nil {
		return d.failErr(c, err)
	}
	// A range of the sale's history: its minutes replace the live 15
	// minutes in the charts, and the live figures stay live.
	from, to, ranged, err := d.historyRange(c, room)
	if err != nil {
		return d.failErr(c, err)
	}
	var rng *templates.AdminRange
	if ranged {
		rep, err := d.report(c.Request().Context(), room, from, to)
		if err != nil {
			return d.failErr(c, err)
		}
		rv.series = historyPoints(rep, rv.view.Capacity)
		rng = &templates.AdminRange{From: from, To: to, Sale: c.QueryParam("range") == "sale"}
	}
	return render.Page(c, status, templates.AdminRoomPage(templates.AdminRoomProps{
		AdminPage: d.page(c), View: rv.view, Series: rv.series, Range: rng, History: d.d.History != nil,
		DegradeControl: d.d.Avail != nil, ControlErrors: errs, Saved: saved,
		Opening: d.opening(c.Request().Context(), room),
	}))
}
