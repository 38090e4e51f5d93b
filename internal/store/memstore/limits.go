package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// bucket is one client bucket's claims: identity -> deadline of its claim (ms).
type bucket struct {
	claims  map[string]int64
	expires int64 // ms: the bucket goes a day after its last new place
}

// ClaimPlace is places.lua in Go.
func (s *Store) ClaimPlace(_ context.Context, room, bucketID, identity string, limit int64, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, n := s.room(room), ms(now)
	record, counts := placesOf(r, n)
	if record(identity).live(n) {
		return queue.ClaimHeld, nil
	}
	if limit <= 0 {
		return queue.ClaimTaken, nil
	}
	b := r.places[bucketID]
	if b == nil || b.expires <= n {
		b = &bucket{claims: map[string]int64{}}
		r.places[bucketID] = b
	}
	if int64(len(b.claims)) >= limit {
		// Only a full bucket is swept, so a claim costs O(limit) at most.
		members := make([]string, 0, len(b.claims))
		for who := range b.claims {
			members = append(members, who)
		}
		sort.Strings(members)
		var held int64
		for _, who := range members {
			if who != identity && counts(who, b.claims[who]) {
				held++
			} else {
				delete(b.claims, who)
			}
		}
		if held >= limit {
			return queue.ClaimFull, nil
		}
	}
	b.claims[identity] = n + queue.PlaceClaimWindow.Milliseconds()
	b.expires = n + queue.PlacesTTL.Milliseconds()
	return queue.ClaimTaken, nil
}

// placesOf is places.lua's record and counts for room r at n (ms).
func placesOf(r *room, n int64) (func(string) *record, func(string, int64) bool) {
	window := queue.PlaceClaimWindow.Milliseconds()
	record := func(who string) *record {
		id, ok := r.visitors[who]
		if !ok {
			return nil
		}
		return r.tickets[id]
	}
	// A member counts while its place lives, or, until its claim's deadline,
	// while the claimed place has not come yet.
	counts := func(who string, deadline int64) bool {
		rec := record(who)
		if rec.counted(n) {
			return true
		}
		if rec != nil && rec.entered >= deadline-window {
			return false
		}
		return deadline > n
	}
	return record, counts
}

// PlacesHeld is held.lua in Go.
func (s *Store) PlacesHeld(_ context.Context, room, bucketID string, now time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, n := s.room(room), ms(now)
	b := r.places[bucketID]
	if b == nil || b.expires <= n {
		return 0, nil
	}
	record, counts := placesOf(r, n)
	members := make([]string, 0, len(b.claims))
	for who := range b.claims {
		members = append(members, who)
	}
	// The least recently checked first, as a sorted set orders them.
	sort.Slice(members, func(i, j int) bool {
		a, c := b.claims[members[i]], b.claims[members[j]]
		return a < c || a == c && members[i] < members[j]
	})
	for _, who := range members[:min(len(members), queue.PlacesSweep)] {
		switch {
		case record(who).counted(n):
			if b.claims[who] <= n {
				b.claims[who] = n
			}
		case !counts(who, b.claims[who]):
			delete(b.claims, who)
		}
	}
	return int64(len(b.claims)), nil
}

func (s *Store) ReleasePlace(_ context.Context, room, bucketID, identity string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.room(room).places[bucketID]; b != nil {
		delete(b.claims, identity)
	}
	return nil
}

// AllowEnter is redis_rate's GCRA for PerMinute(perMinute): a burst of
// perMinute, then one every minute/perMinute. Like Redis, it counts by the
// store's own clock, not the caller's.
func (s *Store) AllowEnter(_ context.Context, room, bucketID string, perMinute int64) (bool, time.Duration, error) {
	if perMinute <= 0 {
		return false, 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.room(room)
	now := float64(time.Now().UnixNano()) / 1e9
	emission := 60.0 / float64(perMinute)
	burst := emission * float64(perMinute)
	tat, ok := r.enters[bucketID]
	if !ok || tat < now {
		tat = now
	}
	next := tat + emission
	diff := now - (next - burst)
	if diff < 0 {
		return false, time.Duration(-diff * float64(time.Second)), nil
	}
	r.enters[bucketID] = next
	return true, 0, nil
}
