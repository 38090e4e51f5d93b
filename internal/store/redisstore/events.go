package redisstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/queue"
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
func (s *Store) Listen(ctx context.Context, onAdmit func(room string, adm []queue.Admitted), onRoom func(room string)) error {
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
			onAdmit(room, parseAdmitted(m.Payload))
		}
	}
}

// parseAdmitted reads tick.lua's admission event: the ids, comma
// separated, then "@<now>:<ttl>:<jitter of each>" (ms): admitted at now,
// orderable at now + jitter, expiring ttl later. Without that last part
// (a server of the release before), or with one that does not fit, the
// times are zero.
func parseAdmitted(payload string) []queue.Admitted {
	parts := strings.Split(payload, ",")
	last := parts[len(parts)-1]
	var times []string
	if strings.HasPrefix(last, "@") {
		parts, times = parts[:len(parts)-1], strings.Split(last[1:], ":")
	}
	out := make([]queue.Admitted, len(parts))
	for i, id := range parts {
		out[i].ID = id
	}
	if len(times) != len(parts)+2 {
		return out
	}
	nums := make([]int64, len(times))
	for i, s := range times {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return out
		}
		nums[i] = n
	}
	at, ttl := nums[0], nums[1]
	for i := range out {
		o := at + nums[2+i]
		out[i].At, out[i].Orderable, out[i].Expires = time.UnixMilli(at), time.UnixMilli(o), time.UnixMilli(o+ttl)
	}
	return out
}
