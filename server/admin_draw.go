package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
)

// drawAdmin is what the scheduled opening's admin handlers need of the line.
type drawAdmin interface {
	StoredSettings(ctx context.Context, room string) (queue.Settings, error)
	Stats(ctx context.Context, room string, now time.Time) (queue.Stats, error)
	LastDraw(ctx context.Context, room string) (queue.DrawRecord, bool, error)
	OpenNow(ctx context.Context, room string) (queue.Settings, error)
	Now() time.Time
}

// drawJSON is a room's scheduled opening as the admin API shows it.
type drawJSON struct {
	OpensAt   *time.Time        `json:"opens_at"`  // null: no opening set
	Scheduled int64             `json:"scheduled"` // in the pre-queue now
	Draw      *queue.DrawRecord `json:"draw"`      // the last draw; null until one ran
}

// handleRoomDraw: GET /admin/api/rooms/:room/draw
func handleRoomDraw(line drawAdmin) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		s, err := line.StoredSettings(ctx, room)
		if err != nil {
			return err
		}
		st, err := line.Stats(ctx, room, line.Now())
		if err != nil {
			return err
		}
		v := drawJSON{OpensAt: s.OpensAt, Scheduled: st.Scheduled}
		rec, ok, err := line.LastDraw(ctx, room)
		if err != nil {
			return err
		}
		if ok {
			v.Draw = &rec
		}
		return c.JSON(http.StatusOK, v)
	}
}

// handleOpenRoom: POST /admin/api/rooms/:room/open moves the scheduled
// opening to now; the next tick draws the pre-queue. 409 not_scheduled
// when no opening is ahead.
func handleOpenRoom(line drawAdmin, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		s, err := line.OpenNow(c.Request().Context(), room)
		if err != nil {
			return err
		}
		adminops.Log(log, c, adminops.ByAdminToken, adminops.OpenedNow(room, *s.OpensAt))
		return c.JSON(http.StatusOK, s)
	}
}
