package server

import (
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// degradeFlag is the one availability flag; hot paths only read it.
type degradeFlag interface{ Degraded() bool }

type never struct{}

func (never) Degraded() bool { return false }

// cachedRooms is what the degraded path needs of the line: settings without
// asking a Redis that is down.
type cachedRooms interface {
	CachedSettings(room string) (queue.Settings, bool)
}

func acceptURL(room string) string { return "/rooms/" + room + "/accept" }

// bypassed answers for a room while Redis is down: no line, an accept page
// whose intents go through the durable outbox into Kafka instead. Every
// server's admission loop reads every room each tick, so a room missing from
// the cache did not exist when Redis went away.
func bypassed(rooms cachedRooms, room, ticket string) (queue.View, error) {
	s, ok := rooms.CachedSettings(room)
	if !ok {
		return queue.View{}, errRoomNotFound
	}
	v := queue.NewView(queue.Ticket{Room: room, ID: ticket, State: vocab.StateBypassed}, &s, nil, time.Time{}, "")
	u := acceptURL(room)
	v.AcceptURL = &u
	return v, nil
}
