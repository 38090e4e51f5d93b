package server

import "github.com/waitroom/waitroom/queue"

// degradeFlag is the one availability flag; hot paths only read it.
type degradeFlag interface{ Degraded() bool }

type never struct{}

func (never) Degraded() bool { return false }

// cachedRooms is what the degraded path needs of the line: settings without
// asking a Redis that is down.
type cachedRooms interface {
	CachedRoom(room string) (queue.Settings, bool)
}

func acceptURL(room string) string { return "/rooms/" + room + "/accept" }

// bypassed answers for a room while Redis is down: no line, an accept page
// whose intents go through the durable outbox into Kafka instead. Every
// server's admission loop reads every room each tick, so a room missing from
// the cache did not exist when Redis went away.
func bypassed(rooms cachedRooms, room, ticket string) (ticketJSON, error) {
	s, ok := rooms.CachedRoom(room)
	if !ok {
		return ticketJSON{}, errRoomNotFound
	}
	u := acceptURL(room)
	return ticketJSON{Room: room, Ticket: ticket, State: queue.StateBypassed, Paused: s.Paused,
		NextUpdateMS: s.TierInterval(1).Milliseconds(), AcceptURL: &u}, nil
}
