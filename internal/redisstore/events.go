package redisstore

import (
	"context"
	"strings"
)

// EventsPattern is the pub/sub pattern on which ticks announce admissions.
func (s *Store) EventsPattern() string { return s.prefix + "{*}:events" }

// RoomFromChannel returns the room of an events channel.
func (s *Store) RoomFromChannel(ch string) (string, bool) {
	n := len(s.prefix)
	if len(ch) < n+len("{}:events") || ch[:n] != s.prefix || ch[n] != '{' {
		return "", false
	}
	rest := ch[n+1:]
	end := len(rest) - len("}:events")
	if end <= 0 || rest[end:] != "}:events" {
		return "", false
	}
	return rest[:end], true
}

// roomChanged is the event payload that says a room's settings changed.
const roomChanged = "*settings"

// Listen delivers this deployment's room events until ctx ends: the tickets
// an admission tick let in (from whichever server ran it) and settings
// changes. It reconnects by itself when Redis comes back.
func (s *Store) Listen(ctx context.Context, onAdmit func(room string, ids []string), onRoom func(room string)) error {
	sub := s.rdb.PSubscribe(ctx, s.EventsPattern())
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			room, ok := s.RoomFromChannel(m.Channel)
			if !ok {
				continue
			}
			if m.Payload == roomChanged {
				onRoom(room)
				continue
			}
			onAdmit(room, strings.Split(m.Payload, ","))
		}
	}
}
