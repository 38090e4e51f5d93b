package dashboard

import (
	"slices"
	"sync"
	"time"
)

// WaitWindow keeps, per room, how long the last admitted visitors waited, so
// the dashboard can show p50/p95 of time waited. The admission loop feeds it
// from every tick; it is bounded by count, not time, so a quiet room keeps
// its last figures.
type WaitWindow struct {
	size int

	mu    sync.Mutex
	rooms map[string]*ring
}

type ring struct {
	d    []time.Duration
	next int
}

var _ WaitStats = (*WaitWindow)(nil)

// NewWaitWindow keeps the last size waits of each room (1000 when size ≤ 0).
func NewWaitWindow(size int) *WaitWindow {
	if size <= 0 {
		size = 1000
	}
	return &WaitWindow{size: size, rooms: make(map[string]*ring)}
}

// Observe records waits of room, in admission order.
func (w *WaitWindow) Observe(room string, waits ...time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.rooms[room]
	if r == nil {
		r = &ring{}
		w.rooms[room] = r
	}
	for _, d := range waits {
		if len(r.d) < w.size {
			r.d = append(r.d, d)
			continue
		}
		r.d[r.next] = d
		r.next = (r.next + 1) % w.size
	}
}

// WaitQuantiles returns p50 and p95 of room's recorded waits.
func (w *WaitWindow) WaitQuantiles(room string) (p50, p95 time.Duration, ok bool) {
	w.mu.Lock()
	r := w.rooms[room]
	var d []time.Duration
	if r != nil {
		d = slices.Clone(r.d)
	}
	w.mu.Unlock()
	if len(d) == 0 {
		return 0, 0, false
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return at(0.50), at(0.95), true
}
