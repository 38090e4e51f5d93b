package redisstore

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/waitroom/waitroom/queue"
)

// ClaimPlace tells whether identity holds a live place in room, and if not
// claims one for bucket unless it already holds limit of them (0: no limit).
func (s *Store) ClaimPlace(ctx context.Context, room, bucket, identity string, limit int64, now time.Time) (int, error) {
	k := keysFor(s.prefix, room)
	n, err := s.call(ctx, placesArgs{Visitors: k.visitors, Tickets: k.tickets, Places: placesKey(s.prefix, room, bucket),
		Stats: k.stats, Base: k.base, Identity: identity, Now: ms(now), Limit: limit,
		Window: queue.PlaceClaimWindow.Milliseconds(), Life: queue.PlacesTTL.Milliseconds()}).Int()
	if err != nil {
		return 0, fail("claim place", err)
	}
	return n, nil
}

// PlacesHeld counts bucket's live places in room (held.lua).
func (s *Store) PlacesHeld(ctx context.Context, room, bucket string, now time.Time) (int64, error) {
	k := keysFor(s.prefix, room)
	n, err := s.call(ctx, heldArgs{Visitors: k.visitors, Tickets: k.tickets, Places: placesKey(s.prefix, room, bucket),
		Stats: k.stats, Base: k.base, Now: ms(now), Window: queue.PlaceClaimWindow.Milliseconds(), Sweep: queue.PlacesSweep}).Int64()
	if err != nil {
		return 0, fail("places held", err)
	}
	return n, nil
}

// ReleasePlace takes back a claim that did not become a place.
func (s *Store) ReleasePlace(ctx context.Context, room, bucket, identity string) error {
	if err := s.rdb.ZRem(ctx, placesKey(s.prefix, room, bucket), identity).Err(); err != nil {
		return fail("release place", err)
	}
	return nil
}

// AllowEnter counts one new place of bucket against perMinute (GCRA, as
// redis_rate keeps it; its key expires when the bucket is full again).
func (s *Store) AllowEnter(ctx context.Context, room, bucket string, perMinute int64) (bool, time.Duration, error) {
	res, err := s.rate.Allow(ctx, entersKey(s.prefix, room, bucket), redis_rate.PerMinute(int(perMinute)))
	if err != nil {
		return false, 0, fail("allow enter", err)
	}
	return res.Allowed > 0, res.RetryAfter, nil
}
