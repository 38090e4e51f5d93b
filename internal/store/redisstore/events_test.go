package redisstore_test

import (
	"testing"

	"github.com/waitroom/waitroom/internal/store/redisstore"
)

// FuzzRoomFromChannel: a channel name read back as a room is exactly the
// events channel of that room; anything else is refused, never a panic.
func FuzzRoomFromChannel(f *testing.F) {
	for _, ch := range []string{"wr:{sale}:events", "wr:{}:events", "wr:{a}:event", "wr:sale", "", "wr:{", "x:{a}:events", "wr:{a}:events}:events"} {
		f.Add(ch)
	}
	s := redisstore.New(nil, "wr:")
	f.Fuzz(func(t *testing.T, ch string) {
		room, ok := s.RoomFromChannel(ch)
		if ok && (room == "" || "wr:{"+room+"}:events" != ch) {
			t.Fatalf("%q read as room %q", ch, room)
		}
	})
}
