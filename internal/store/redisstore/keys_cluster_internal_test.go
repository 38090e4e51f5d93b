package redisstore

import (
	"context"
	"reflect"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestRoomKeysShareOneSlot: every key of a room, those the scripts take
// together and those built beside keysFor, hashes to the room's Redis
// Cluster slot, as the cluster itself computes it.
func TestRoomKeysShareOneSlot(t *testing.T) {
	cc := redistest.SharedCluster(t).Client(t)
	ctx := context.Background()
	s := New(cc, "wr:")
	for _, room := range []string{"demo", "a", "sale-2026-11-29", "0123456789-0123456789-0123456789-0123456789-0123456789-012345678"} {
		k := keysFor(s.prefix, room)
		var keys []string
		v := reflect.ValueOf(k)
		for i := range v.NumField() {
			keys = append(keys, v.Field(i).String())
		}
		keys = append(keys, k.base+"pow:challenge", holderKey(s.prefix, room, "ticket"),
			placesKey(s.prefix, room, "198.51.100.0"), "rate:"+s.prefix+"{"+room+"}:enters:198.51.100.0")
		want, err := cc.ClusterKeySlot(ctx, "{"+room+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			if got, err := cc.ClusterKeySlot(ctx, key).Result(); err != nil || got != want {
				t.Errorf("room %s: %s in slot %d (%v), want %d", room, key, got, err, want)
			}
		}
	}
}
