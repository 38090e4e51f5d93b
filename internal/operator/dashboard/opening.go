package dashboard

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// opening is the room page's scheduled opening: nil without one, or when
// Redis does not answer (the page still shows the rest).
func (d *Dashboard) opening(ctx context.Context, room string) *templates.AdminOpening {
	s, err := d.d.Line.StoredSettings(ctx, room)
	if err != nil || s.OpensAt == nil {
		return nil
	}
	now := d.d.Clock.Now()
	o := &templates.AdminOpening{OpensAt: *s.OpensAt, Ahead: s.Scheduled(now)}
	if st, err := d.d.Line.Stats(ctx, room, now); err == nil {
		o.Scheduled = st.Scheduled
	}
	if rec, ok, err := d.d.Line.LastDraw(ctx, room); err == nil && ok {
		o.Draw = &templates.AdminDraw{At: rec.At, Drawn: rec.Drawn, Server: rec.Server, OrderHash: rec.OrderHash}
	}
	return o
}

// handleOpenNow: POST /admin/rooms/:room/open moves the room's scheduled
// opening to now, as the admin API's POST /admin/api/rooms/:room/open; the
// next tick draws the pre-queue.
func handleOpenNow(d *Dashboard, line Line) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, ok := roomParam(c)
		if !ok {
			return d.failErr(c, queue.ErrRoomNotFound)
		}
		ctx := c.Request().Context()
		s, err := line.OpenNow(ctx, room)
		if err != nil {
			return d.failErr(c, err)
		}
		adminops.Log(d.log, c, adminops.BySession, adminops.OpenedNow(room, *s.OpensAt))
		d.changed(ctx, room)
		if wantsJSON(c) {
			return c.JSON(http.StatusOK, s)
		}
		return c.Redirect(http.StatusSeeOther, templates.AdminRoomPath(room, "?saved=1"))
	}
}
