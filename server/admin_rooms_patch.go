package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
)

var errPatchNotObject = errorf(http.StatusBadRequest, "invalid", "body: a JSON merge patch (RFC 7396) is an object of the fields to change, e.g. {\"paused\": true}")

// handlePatchRoom: PATCH /admin/api/rooms/:room changes only the fields the
// body names, as a JSON merge patch (RFC 7396): an object merges into the
// room's stored settings, null resets a field to its default. The result is
// validated whole, as PUT's body is, and logged as PUT's changes are.
func handlePatchRoom(line roomAdmin, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		patch, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(patch, &fields) != nil || fields == nil {
			return errPatchNotObject
		}
		ctx := c.Request().Context()
		old, err := line.StoredSettings(ctx, room)
		if err != nil {
			return err
		}
		stored, err := json.Marshal(old)
		if err != nil {
			return err
		}
		merged, err := jsonpatch.MergePatch(stored, patch)
		if err != nil {
			return errPatchNotObject
		}
		s, err := queue.ParseSettings(merged)
		if err != nil {
			return err
		}
		if err := line.PutRoom(ctx, room, s); err != nil {
			return err
		}
		adminops.Log(log, c, adminops.ByAdminToken, adminops.SettingsChange(adminops.Saved, room, &old, s))
		return c.JSON(http.StatusOK, s)
	}
}
