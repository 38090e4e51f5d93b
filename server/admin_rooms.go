package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
)

// roomAdmin is what the admin room handlers need of the line.
type roomAdmin interface {
	PutRoom(ctx context.Context, room string, s queue.Settings) error
	DeleteRoom(ctx context.Context, room string) error
	StoredSettings(ctx context.Context, room string) (queue.Settings, error)
	ListRooms(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, room string, now time.Time) (queue.Stats, error)
	Now() time.Time
}

type roomJSON struct {
	ID       string         `json:"id"`
	Settings queue.Settings `json:"settings"`
}

// adminRoomParam validates the room id of an admin path: a bad id is a 400.
func adminRoomParam(c echo.Context) (string, error) {
	room := c.Param("room")
	if !queue.ValidRoomID(room) {
		return "", &apiError{Status: http.StatusBadRequest, Code: "invalid", Field: "room", Message: "room: must match [a-z0-9-]{1,64}"}
	}
	return room, nil
}

// handleListRooms: GET /admin/api/rooms
func handleListRooms(line roomAdmin) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		ids, err := line.ListRooms(ctx)
		if err != nil {
			return err
		}
		rooms := make([]roomJSON, 0, len(ids))
		for _, id := range ids {
			s, err := line.StoredSettings(ctx, id)
			if errors.Is(err, queue.ErrRoomNotFound) {
				continue // deleted meanwhile
			}
			if err != nil {
				return err
			}
			rooms = append(rooms, roomJSON{ID: id, Settings: s})
		}
		return c.JSON(http.StatusOK, map[string]any{"rooms": rooms})
	}
}

// handleGetRoom: GET /admin/api/rooms/:room answers the settings as PUT takes them.
func handleGetRoom(line roomAdmin) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		s, err := line.StoredSettings(c.Request().Context(), room)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, s)
	}
}

// handlePutRoom: PUT /admin/api/rooms/:room creates or replaces a room; fields
// left out take their defaults. A body that leaves out a field the room has
// set is refused (409) rather than silently resetting it: a partial PUT is the
// mistake that wipes a live room; null resets a field on purpose, PATCH
// changes some. The running loop picks it up within one tick. The change is
// logged as the dashboard's are.
func handlePutRoom(line roomAdmin, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		s, err := queue.ParseSettings(data)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		old, getErr := line.StoredSettings(ctx, room)
		if getErr == nil {
			if err := refuseDroppedFields(data, old); err != nil {
				return err
			}
		}
		if err := line.PutRoom(ctx, room, s); err != nil {
			return err
		}
		status, ch := http.StatusOK, adminops.SettingsChange(adminops.Saved, room, &old, s)
		if errors.Is(getErr, queue.ErrRoomNotFound) {
			status, ch = http.StatusCreated, adminops.SettingsChange(adminops.Created, room, nil, s)
		}
		adminops.Log(log, c, adminops.ByAdminToken, ch)
		return c.JSON(status, s)
	}
}

// handleDeleteRoom: DELETE /admin/api/rooms/:room removes the room and its line.
func handleDeleteRoom(line roomAdmin, log *slog.Logger) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		if err := line.DeleteRoom(c.Request().Context(), room); err != nil {
			return err
		}
		adminops.Log(log, c, adminops.ByAdminToken, adminops.Change{Room: room, What: adminops.Deleted})
		return c.NoContent(http.StatusNoContent)
	}
}

// handleRoomStats: GET /admin/api/rooms/:room/stats
func handleRoomStats(line roomAdmin) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := adminRoomParam(c)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		if _, err := line.StoredSettings(ctx, room); err != nil {
			return err
		}
		st, err := line.Stats(ctx, room, line.Now())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, st)
	}
}
