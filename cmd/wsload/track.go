package main

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/waitroom/waitroom/internal/vocab"
)

// phase is the part of the run a sample falls in; only the window is the
// measurement, the others are reported apart.
type phase int32

const (
	phaseRamp   phase = iota // opening the connections
	phaseSettle              // all open, not yet measured
	phaseWindow              // the measurement
	phaseDone                // closing down: nothing is recorded
	nPhases     = phaseDone
)

func (p phase) String() string {
	switch p {
	case phaseRamp:
		return "ramp"
	case phaseSettle:
		return "settle"
	case phaseWindow:
		return "window"
	}
	return "done"
}

// ticketMsg is what wsload reads of each pushed ticket JSON.
type ticketMsg struct {
	Ticket       string  `json:"ticket"`
	State        string  `json:"state"`
	Position     int64   `json:"position"`
	NextUpdateMS int64   `json:"next_update_ms"`
	OrderableAt  *string `json:"orderable_at"`
	Paused       bool    `json:"paused"`
}

// waiter is one connection's last message. Only its reader goroutine writes
// it; the end-of-window check reads it under mu.
type waiter struct {
	mu       sync.Mutex
	conn     *websocket.Conn // the open connection, for closeAll
	msgs     int
	lastAt   time.Time     // when the last message came (monotonic)
	promised time.Duration // its next_update_ms: the longest the next update may take while the line moves
	state    string
	position int64
	// reconnected: this waiter's server went away and it dialed another;
	// its admission is counted in the pace but not in the latency (it may
	// have been admitted while it had no socket).
	reconnected bool
}

// tracker collects every connection's samples by phase.
type tracker struct {
	mu sync.Mutex
	// movingSince is when the line started moving: a gap that began before
	// it measures a paused line, not the push path, and is not counted.
	movingSince time.Time
	late        [nPhases]map[int64][]float64 // lateness (ms, clipped at 0) by promised interval (ms)
	early       [nPhases]int                 // updates that came sooner than promised (tier throttle broken or forced)
	admit       [nPhases][]float64           // admitted message received - orderable_at, ms
	finals      [nPhases]map[string]int      // final states seen
	msgs        [nPhases]int
	badMsgs     int
	// windowStart and admitLimit let slow admissions be placed in time:
	// seconds into the window of each admission slower than admitLimit.
	windowStart time.Time
	admitLimit  time.Duration
	slowAdmits  []float64
	admits      []admitEvent // window: every admission heard, for the pace
	reconnects  int          // sockets redialed on another server (all phases)
}

// admitEvent is one admission as its waiter heard it: the server's
// admission time (orderable_at, jitter 0) and the receive time.
type admitEvent struct {
	at, heard   time.Time
	reconnected bool
}

func newTracker() *tracker {
	t := &tracker{}
	for p := range nPhases {
		t.late[p] = map[int64][]float64{}
		t.finals[p] = map[string]int{}
	}
	return t
}

// take returns the samples so far and starts afresh (one stage's worth);
// movingSince and the bad-message count carry over.
func (t *tracker) take() *tracker {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := &tracker{
		movingSince: t.movingSince, late: t.late, early: t.early, admit: t.admit, finals: t.finals, msgs: t.msgs,
		badMsgs: t.badMsgs, windowStart: t.windowStart, admitLimit: t.admitLimit, slowAdmits: t.slowAdmits,
		admits: t.admits, reconnects: t.reconnects,
	}
	n := newTracker()
	t.late, t.early, t.admit, t.finals, t.msgs = n.late, n.early, n.admit, n.finals, n.msgs
	t.slowAdmits, t.admits, t.reconnects = nil, nil, 0
	return old
}

func (t *tracker) setMovingSince(at time.Time) {
	t.mu.Lock()
	t.movingSince = at
	t.mu.Unlock()
}

// earlySlack is how much sooner than promised an update may come before it
// counts as early: the hub's ticks and the two clocks' reads are not exact.
const earlySlack = 100 * time.Millisecond

// observe records one message m of w received at now (wall and monotonic
// from time.Now) during phase p. It reports whether m was final.
func (t *tracker) observe(w *waiter, m ticketMsg, now time.Time, p phase) (final bool) {
	w.mu.Lock()
	prevAt, prevPromise, prevState, n, reconnected := w.lastAt, w.promised, w.state, w.msgs, w.reconnected
	w.msgs++
	w.lastAt, w.promised, w.state, w.position = now, time.Duration(m.NextUpdateMS)*time.Millisecond, m.State, m.Position
	w.mu.Unlock()

	final = m.State != string(vocab.StateWaiting)
	if p >= phaseDone {
		return final
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs[p]++
	if final {
		t.finals[p][m.State]++
	}
	if m.State == string(vocab.StateAdmitted) {
		if m.OrderableAt == nil {
			t.badMsgs++
		} else if at, err := time.Parse(time.RFC3339Nano, *m.OrderableAt); err != nil {
			t.badMsgs++
		} else {
			if p == phaseWindow {
				t.admits = append(t.admits, admitEvent{at: at, heard: now, reconnected: reconnected})
			}
			if reconnected {
				return final
			}
			t.admit[p] = append(t.admit[p], ms(now.Sub(at)))
			if p == phaseWindow && t.admitLimit > 0 && now.Sub(at) > t.admitLimit && len(t.slowAdmits) < 200 {
				t.slowAdmits = append(t.slowAdmits, math.Round(now.Sub(t.windowStart).Seconds()*10)/10)
			}
		}
	}
	if n == 0 || prevState != string(vocab.StateWaiting) || m.State != string(vocab.StateWaiting) || prevAt.Before(t.movingSince) || t.movingSince.IsZero() {
		return final
	}
	gap := now.Sub(prevAt)
	if gap < prevPromise-earlySlack {
		t.early[p]++
	}
	key := prevPromise.Milliseconds()
	t.late[p][key] = append(t.late[p][key], ms(max(gap-prevPromise, 0)))
	return final
}

// overdue is, at the end of the window, how long past its promise each
// still-waiting connection has gone without an update (ms, > 0 only).
func overdue(ws []*waiter, at time.Time, movingSince time.Time) []float64 {
	var out []float64
	for _, w := range ws {
		w.mu.Lock()
		if w.msgs > 0 && w.state == string(vocab.StateWaiting) && !movingSince.IsZero() {
			// An update promised while the line was still paused is due from when it moved.
			from := w.lastAt
			if from.Before(movingSince) {
				from = movingSince
			}
			if d := at.Sub(from) - w.promised; d > 0 {
				out = append(out, ms(d))
			}
		}
		w.mu.Unlock()
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dist summarizes samples in milliseconds.
type dist struct {
	N     int     `json:"n"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	Over  int     `json:"over"`     // samples above Limit
	Limit float64 `json:"limit_ms"` // the target the samples are held against
}

func summarize(xs []float64, limit float64) dist {
	d := dist{N: len(xs), Limit: limit}
	if len(xs) == 0 {
		return d
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	d.P50, d.P90, d.P99, d.Max = rank(s, 0.50), rank(s, 0.90), rank(s, 0.99), s[len(s)-1]
	for _, x := range s {
		if x > limit {
			d.Over++
		}
	}
	return d
}

// rank is the nearest-rank percentile of sorted s, rounded to 0.1 ms.
func rank(s []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	i = min(max(i, 0), len(s)-1)
	return math.Round(s[i]*10) / 10
}

// histogram counts xs (ms) in buckets of width ms; the last of its 21
// buckets holds everything from 20 widths up.
func histogram(xs []float64, width float64) []int {
	h := make([]int, 21)
	for _, x := range xs {
		h[min(int(x/width), len(h)-1)]++
	}
	return h
}
