package adminops

import (
	"context"
	"fmt"

	"github.com/waitroom/waitroom/queue"
)

// SoldOut is the kind of change that marks a sale sold out or undoes it.
const SoldOut = "sold_out"

// RoomStore reads and writes a room's settings.
type RoomStore interface {
	StoredSettings(ctx context.Context, room string) (queue.Settings, error)
	PutRoom(ctx context.Context, room string, s queue.Settings) error
}

// SetSoldOut marks room's sale sold out (on) or undoes it, over its stored
// settings, and returns the change for the audit line. The put announces the
// change to every server, whose open pages are pushed at once.
func SetSoldOut(ctx context.Context, rooms RoomStore, room string, on bool) (queue.Settings, Change, error) {
	old, err := rooms.StoredSettings(ctx, room)
	if err != nil {
		return queue.Settings{}, Change{}, err
	}
	s := old
	s.SoldOut = on
	if err := rooms.PutRoom(ctx, room, s); err != nil {
		return queue.Settings{}, Change{}, fmt.Errorf("adminops: set sold out: %w", err)
	}
	return s, SettingsChange(SoldOut, room, &old, s), nil
}
