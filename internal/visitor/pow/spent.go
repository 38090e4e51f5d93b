package pow

import (
	"sync"
	"time"
)

// SpentSet remembers spent challenge ids in this process, for when the shared
// store (Redis) is down: single use then holds per server only. It holds at
// most max ids; when full of live ids it refuses, rather than forget one.
type SpentSet struct {
	mu  sync.Mutex
	max int
	ids map[string]time.Time // id -> when it may be forgotten
}

// NewSpentSet makes a set of at most max ids.
func NewSpentSet(max int) *SpentSet {
	return &SpentSet{max: max, ids: make(map[string]time.Time)}
}

// Spend records id until expires. It reports false when id was already spent
// or the set is full of ids that have not expired yet.
func (s *SpentSet) Spend(id string, expires, now time.Time) (ok, full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, seen := s.ids[id]; seen && now.Before(until) {
		return false, false
	}
	if len(s.ids) >= s.max {
		for k, until := range s.ids {
			if !now.Before(until) {
				delete(s.ids, k)
			}
		}
		if len(s.ids) >= s.max {
			return false, true
		}
	}
	s.ids[id] = expires
	return true, false
}
