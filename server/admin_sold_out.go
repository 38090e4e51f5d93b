package server

import (
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
)

// soldOutJSON is the sold-out endpoint's body and answer.
type soldOutJSON struct {
	SoldOut *bool `json:"sold_out"`
}

// handleSoldOut: POST /admin/api/rooms/:room/sold-out {"sold_out": true|false}
// ends the sale (everyone in line and every newcomer sees the sold out page,
// pushed to open pages at once; admitted visitors keep their tokens) or
// undoes it (the line comes back as it was). Logged as the dashboard's is.
func handleSoldOut(rooms adminops.RoomStore, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		var body soldOutJSON
		if err := decodeBody(c, &body, false); err != nil {
			return err
		}
		if body.SoldOut == nil {
			return &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "sold_out", Message: "sold_out: is required (true or false)"}
		}
		s, ch, err := adminops.SetSoldOut(c.Request().Context(), rooms, room, *body.SoldOut)
		if err != nil {
			return err
		}
		adminops.Log(log, c, adminops.ByAdminToken, ch)
		return c.JSON(http.StatusOK, soldOutJSON{SoldOut: &s.SoldOut})
	}
}
