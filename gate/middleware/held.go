package middleware

import (
	"sync"
	"time"
)

// maxHeld bounds what one server remembers of tokens: entries live until
// their token expires (session_ttl_s), so this covers far more shoppers than
// one checkout serves at once.
const maxHeld = 100_000

// held is what this server learnt of its tokens: whom waitroom bound each to
// (so the next request of the same visitor needs no call), and which it saw
// completed (so a completed token is refused here even offline). Every entry
// goes when its token expires; the map never holds more than max entries.
type held struct {
	mu      sync.Mutex
	max     int
	now     func() time.Time
	entries map[string]heldEntry // by jti
}

type heldEntry struct {
	holder string
	done   bool
	exp    time.Time
}

func newHeld(max int) *held {
	return &held{max: max, now: time.Now, entries: make(map[string]heldEntry)}
}

func (h *held) heldBy(jti string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[jti]
	if !ok || !h.now().Before(e.exp) {
		return ""
	}
	return e.holder
}

func (h *held) completed(jti string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[jti]
	return ok && e.done && h.now().Before(e.exp)
}

func (h *held) bind(jti, holder string, exp time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entries[jti]
	e.holder, e.exp = holder, exp
	h.put(jti, e)
}

func (h *held) complete(jti string, exp time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.entries[jti]
	e.done, e.exp = true, exp
	h.put(jti, e)
}

// put stores e, first dropping expired entries when the map is full, then,
// if still full, any one: a forgotten binding costs one call to waitroom.
func (h *held) put(jti string, e heldEntry) {
	if _, ok := h.entries[jti]; !ok && len(h.entries) >= h.max {
		now := h.now()
		for k, old := range h.entries {
			if !now.Before(old.exp) {
				delete(h.entries, k)
			}
		}
		for k := range h.entries {
			if len(h.entries) < h.max {
				break
			}
			delete(h.entries, k)
		}
	}
	h.entries[jti] = e
}
