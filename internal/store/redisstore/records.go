package redisstore

import (
	"context"
	"fmt"
)

// Record encodings and their retirement. This release writes one encoding:
// uppercase records in the room's buckets (lua/record.lua). It still reads
// and writes back the two before it, kept in the room's single tickets hash
// for a rolling upgrade: lowercase compact records (the release before
// the buckets) and JSON records (the one before that). The release after
// next drops both: its record.lua and decode.go read the buckets' records
// only, and its servers refuse to start while OldRecords finds any.
//
// Servers of this release retire the compact records at start
// (RetireOldRecords: moved into the buckets, ids kept). A JSON record's id
// is no seq and cannot be kept in the buckets: it stays until its ticket
// ends and is purged (session_ttl_s and EndedKept at most), which a rolling
// upgrade outlives long before the release after next.

// retireChunk bounds the members one retire.lua call looks at.
const retireChunk = 500

// Retired is what RetireOldRecords did in one room.
type Retired struct {
	Moved int64 // compact records moved into the buckets
	Left  int64 // records that stay where they are (JSON): they end by themselves
}

// RetireOldRecords moves room's records of the compact encoding from before
// the buckets into the buckets, keeping their ids, places and identities;
// safe to run again, and beside servers of the release before (a record
// they write later is moved by the next run). JSON records are left.
func (s *Store) RetireOldRecords(ctx context.Context, room string) (Retired, error) {
	k := keysFor(s.prefix, room)
	var out Retired
	var cursor uint64
	for {
		members, next, err := s.rdb.HScan(ctx, k.tickets, cursor, "*", retireChunk).Result()
		if err != nil {
			return out, fail("retire old records "+room, err)
		}
		a := retireArgs{Tickets: k.tickets, Seen: k.seen, Visitors: k.visitors, Stats: k.stats, Base: k.base}
		for i := 0; i < len(members); i += 2 { // HSCAN answers field, value, ...
			a.Members = append(a.Members, members[i])
		}
		if len(a.Members) > 0 {
			res, err := s.call(ctx, a).Int64Slice()
			if err != nil {
				return out, fail("retire old records "+room, err)
			}
			if len(res) != 2 {
				return out, fmt.Errorf("redisstore: retire old records %s: unexpected reply %v", room, res)
			}
			out.Moved += res[0]
			out.Left += res[1]
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// OldRecords counts each room's records of the encodings before the
// buckets (rooms with none left out): the startup check the release after
// next refuses to start on.
func (s *Store) OldRecords(ctx context.Context) (map[string]int64, error) {
	rooms, err := s.ListRooms(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, room := range rooms {
		n, err := s.rdb.HLen(ctx, keysFor(s.prefix, room).tickets).Result()
		if err != nil {
			return nil, fail("old records "+room, err)
		}
		if n > 0 {
			out[room] = n
		}
	}
	return out, nil
}
