package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// errNoHistory answers a history range or report on a server without one.
var errNoHistory = errors.New("dashboard: no history")

// historyRange reads the room page's range: none (the live 15 minutes),
// range=sale (the whole history kept) or from/to (RFC 3339, as the
// report's); ok is false for the live view.
func (d *Dashboard) historyRange(c echo.Context, room string) (from, to time.Time, ok bool, err error) {
	q := c.QueryParams()
	if q.Get("range") != "sale" && q.Get("from") == "" && q.Get("to") == "" {
		return from, to, false, nil
	}
	if d.d.History == nil {
		return from, to, false, errNoHistory
	}
	from, to, err = d.d.History.Window(c.Request().Context(), room, q.Get("from"), q.Get("to"), d.d.Clock.Now())
	return from, to, err == nil, err
}

// report builds room's report over [from, to), the live counters closing
// the last minute.
func (d *Dashboard) report(ctx context.Context, room string, from, to time.Time) (history.Report, error) {
	now := d.d.Clock.Now()
	return d.d.History.Load(ctx, room, from, to, now, func(ctx context.Context) (history.Reading, error) {
		st, err := d.d.Line.Stats(ctx, room, now)
		return history.FromStats(st), err
	})
}

// historyPoints are a report's minutes as the charts' points: counts per
// minute become the charts' rates. History keeps no capacity over time:
// the room's capacity now is drawn; the estimate at the back is not kept.
func historyPoints(rep history.Report, capacity int64) []templates.AdminPoint {
	out := make([]templates.AdminPoint, 0, len(rep.Rows))
	perS := func(p *int64) *float64 {
		if p == nil {
			return nil
		}
		v := float64(*p) / 60
		return &v
	}
	perMin := func(p *int64) *float64 {
		if p == nil {
			return nil
		}
		v := float64(*p)
		return &v
	}
	for _, r := range rep.Rows {
		if r.Waiting == nil {
			continue // a minute of additions only: no line to draw
		}
		out = append(out, templates.AdminPoint{
			T: r.Minute.UnixMilli(), Waiting: *r.Waiting + *r.Scheduled, Active: *r.Active, Capacity: capacity,
			AdmittedPerS: perS(r.Admitted), EntriesPerS: perS(r.Arrivals), AbandonedPerS: perS(r.Abandoned),
			NoShowsPerMin: perMin(r.NoShows),
		})
	}
	return out
}

// handleReport: GET /admin/rooms/:room/report, the printable sale report
// over the whole history kept (or from/to); format=csv|json downloads it
// as the admin API's report does.
func (d *Dashboard) handleReport(c echo.Context) error {
	room, ok := roomParam(c)
	if !ok || d.d.History == nil {
		return d.failErr(c, queue.ErrRoomNotFound)
	}
	ctx := c.Request().Context()
	s, err := d.d.Line.StoredSettings(ctx, room)
	if err != nil {
		return d.failErr(c, err)
	}
	format := c.QueryParam("format")
	if format != "" && format != "csv" && format != "json" {
		return d.failErr(c, &queue.FieldError{Field: "format", Message: "csv or json"})
	}
	q := c.QueryParams()
	from, to, err := d.d.History.Window(ctx, room, q.Get("from"), q.Get("to"), d.d.Clock.Now())
	if err != nil {
		return d.failErr(c, err)
	}
	rep, err := d.report(ctx, room, from, to)
	if err != nil {
		return d.failErr(c, err)
	}
	switch format {
	case "json":
		c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+room+`-report.json"`)
		return c.JSON(http.StatusOK, rep)
	case "csv":
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		h.Set(echo.HeaderContentDisposition, `attachment; filename="`+room+`-report.csv"`)
		c.Response().WriteHeader(http.StatusOK)
		return rep.WriteCSV(c.Response())
	}
	return render.Page(c, http.StatusOK, templates.AdminReportPage(templates.AdminReportProps{
		AdminPage: d.page(c), Room: room, Title: templates.AdminTitle(d.lang(c), s.Title.String(), s.Title.ByLang()),
		Summary: rep.Summary, Keep: d.d.History.Keep(),
	}))
}
