package dashboard

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// roomDeleter removes a room and its whole line through the line.
type roomDeleter interface {
	DeleteRoom(ctx context.Context, room string) error
}

// handleDeletePage: GET /admin/rooms/:room/delete asks for confirmation.
func handleDeletePage(d *Dashboard, rooms roomReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, ok := roomParam(c)
		if !ok {
			return d.failErr(c, queue.ErrRoomNotFound)
		}
		s, err := rooms.StoredSettings(c.Request().Context(), room)
		if err != nil {
			return d.failErr(c, err)
		}
		page := d.page(c)
		return render.Page(c, http.StatusOK, templates.AdminDeletePage(templates.AdminDeleteProps{
			AdminPage: page, Room: room, Title: s.Title.In(string(page.Lang)),
		}))
	}
}

// handleDelete: POST /admin/rooms/:room/delete, the confirmed delete.
func handleDelete(d *Dashboard, rooms roomReader, del roomDeleter) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, ok := roomParam(c)
		if !ok {
			return d.failErr(c, queue.ErrRoomNotFound)
		}
		ctx := c.Request().Context()
		if _, err := rooms.StoredSettings(ctx, room); err != nil {
			return d.failErr(c, err)
		}
		if err := del.DeleteRoom(ctx, room); err != nil {
			return d.failErr(c, fmt.Errorf("dashboard: delete room: %w", err))
		}
		adminops.Log(d.log, c, adminops.BySession, adminops.Change{Room: room, What: adminops.Deleted})
		d.changed(ctx, room)
		if wantsJSON(c) {
			return c.NoContent(http.StatusNoContent)
		}
		return c.Redirect(http.StatusSeeOther, "/admin")
	}
}
