package server

import (
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/waitroom/waitroom/queue"
)

// intentLimits count the room's per-client limits for intents while Redis,
// where they are normally kept, is down: each server by itself, in memory.
// enters_per_ip_per_minute limits a client's new intents per minute;
// places_per_ip is a bucket of that many new intents, refilled at that many
// an hour. Only new intents count: a visitor among the last few a client
// bucket left intents for is let through to its open intent.
//
// Memory is bounded: a client idle for an hour is forgotten (its buckets
// would be full again by then), and beyond maxIntentClients the oldest
// entries go first; each remembers at most recentVisitors visitors.
type intentLimits struct {
	mu      sync.Mutex
	max     int
	clients map[string]*intentClient // by room and client bucket
}

type intentClient struct {
	enters, places *rate.Limiter
	last           time.Time
	recent         []string // visitors whose new intents this client made, newest last
}

const (
	maxIntentClients = 50_000
	intentClientIdle = time.Hour
	recentVisitors   = 16
)

func newIntentLimits(max int) *intentLimits {
	return &intentLimits{max: max, clients: make(map[string]*intentClient)}
}

// reservation is one intent's claim on its client's limits: kept with
// created once a new intent is written, or given back with cancel.
type reservation struct {
	l       *intentLimits
	c       *intentClient
	visitor string
	rs      []*rate.Reservation
}

func (r reservation) cancel(now time.Time) {
	for _, x := range r.rs {
		x.CancelAt(now)
	}
}

// created remembers that the visitor now has an open intent.
func (r reservation) created() {
	if r.c == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	r.c.recent = append(r.c.recent, r.visitor)
	if len(r.c.recent) > recentVisitors {
		r.c.recent = append(r.c.recent[:0], r.c.recent[1:]...)
	}
}

// reserve takes one new intent of visitor from bucket's limits in room at
// now, or returns the limit that refuses it.
func (l *intentLimits) reserve(room, bucket, visitor string, s *queue.Settings, now time.Time) (reservation, error) {
	bp := s.BotProtection
	if bp.EntersPerIPPerMinute <= 0 && bp.PlacesPerIP <= 0 {
		return reservation{}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.client(room+"\x00"+bucket, bp, now)
	if slices.Contains(c.recent, visitor) {
		return reservation{}, nil // most likely asking again for its open intent
	}
	out := reservation{l: l, c: c, visitor: visitor}
	take := func(lim *rate.Limiter, name string, max int64) error {
		if lim == nil {
			return nil
		}
		r := lim.ReserveN(now, 1)
		if d := r.DelayFrom(now); !r.OK() || d > 0 {
			r.CancelAt(now)
			out.cancel(now)
			return &queue.LimitError{Limit: name, Max: max, RetryAfter: d}
		}
		out.rs = append(out.rs, r)
		return nil
	}
	if err := take(c.enters, queue.LimitEntersPerMinute, bp.EntersPerIPPerMinute); err != nil {
		return reservation{}, err
	}
	if err := take(c.places, queue.LimitPlaces, bp.PlacesPerIP); err != nil {
		return reservation{}, err
	}
	return out, nil
}

// client returns the limiters of key, made for the room's current limits.
func (l *intentLimits) client(key string, bp queue.BotProtection, now time.Time) *intentClient {
	c, ok := l.clients[key]
	if ok && c.fits(bp) {
		c.last = now
		return c
	}
	if !ok && len(l.clients) >= l.max {
		l.evict(now)
	}
	c = &intentClient{last: now}
	if n := bp.EntersPerIPPerMinute; n > 0 {
		c.enters = rate.NewLimiter(rate.Limit(float64(n)/60), int(n))
	}
	if n := bp.PlacesPerIP; n > 0 {
		c.places = rate.NewLimiter(rate.Limit(float64(n)/3600), int(n))
	}
	l.clients[key] = c
	return c
}

// fits reports whether c was made for the limits bp (a room's settings may
// change during the outage).
func (c *intentClient) fits(bp queue.BotProtection) bool {
	burst := func(lim *rate.Limiter) int64 {
		if lim == nil {
			return 0
		}
		return int64(lim.Burst())
	}
	return burst(c.enters) == bp.EntersPerIPPerMinute && burst(c.places) == bp.PlacesPerIP
}

// evict forgets idle clients, then, if none was idle, those last seen in
// the oldest tenth of the time since the oldest was.
func (l *intentLimits) evict(now time.Time) {
	for k, c := range l.clients {
		if now.Sub(c.last) >= intentClientIdle {
			delete(l.clients, k)
		}
	}
	if len(l.clients) < l.max {
		return
	}
	var oldest time.Time
	for _, c := range l.clients {
		if oldest.IsZero() || c.last.Before(oldest) {
			oldest = c.last
		}
	}
	cut := oldest.Add(max(now.Sub(oldest)/10, time.Nanosecond))
	for k, c := range l.clients {
		if c.last.Before(cut) {
			delete(l.clients, k)
		}
	}
}
