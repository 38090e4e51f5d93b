package queue

import "context"

// RoomSnapshot is this server's copy of the rooms on local disk, with
// Redis's data epoch: a server that starts during a Redis outage serves
// degraded mode for every room it knew, and rooms lost by a Redis restart
// without persistence are put back from it. Settings include the allowed
// embedders.
type RoomSnapshot interface {
	// Load returns every room kept and the last epoch seen ("" when none).
	Load(ctx context.Context) (rooms map[string]Settings, epoch string, err error)
	// SaveRoom keeps a room's settings; DeleteRoom drops them.
	SaveRoom(ctx context.Context, room string, s Settings) error
	DeleteRoom(ctx context.Context, room string) error
	// SaveEpoch keeps the epoch last seen.
	SaveEpoch(ctx context.Context, epoch string) error
}
