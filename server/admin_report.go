package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/history"
)

// reportSource is the sale's history (*history.Store).
type reportSource interface {
	Window(ctx context.Context, room, from, to string, now time.Time) (time.Time, time.Time, error)
	Load(ctx context.Context, room string, from, to, now time.Time, live func(context.Context) (history.Reading, error)) (history.Report, error)
}

// handleRoomReport: GET /admin/api/rooms/:room/report?from=&to=&format=csv|json,
// the room's minutes over the range (by default the whole history kept)
// with their summary in JSON, or the minutes alone as CSV.
func handleRoomReport(line roomAdmin, hist reportSource) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		format := c.QueryParam("format")
		if format != "" && format != "json" && format != "csv" {
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "format", Message: "format: csv or json"}
		}
		ctx := c.Request().Context()
		if _, err := line.StoredSettings(ctx, room); err != nil {
			return err
		}
		now := line.Now()
		from, to, err := hist.Window(ctx, room, c.QueryParam("from"), c.QueryParam("to"), now)
		if err != nil {
			return err
		}
		rep, err := hist.Load(ctx, room, from, to, now, func(ctx context.Context) (history.Reading, error) {
			st, err := line.Stats(ctx, room, now)
			return history.FromStats(st), err
		})
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		if format != "csv" {
			return c.JSON(http.StatusOK, rep)
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		h.Set(echo.HeaderContentDisposition, `attachment; filename="`+room+`-report.csv"`)
		c.Response().WriteHeader(http.StatusOK)
		return rep.WriteCSV(c.Response())
	}
}

var _ reportSource = (*history.Store)(nil)
