package main

import (
	"slices"
	"time"
)

// paceReport is how fast the room admitted, in sliding windows of one
// second, from the admissions the clients heard. With several servers each
// ticking the room, two ticks a few milliseconds apart can straddle a batch
// interval's boundary and admit two batches where one was due: a per-bucket
// count hides that; the sliding window shows it.
type paceReport struct {
	ConfiguredPerS float64 `json:"configured_per_s"` // batch size x batches per second
	// OneAdmitterBound is the most one admitter on interval buckets can put
	// in a sliding second: one batch more than the rate, when ticks fall
	// late in one bucket and early in the next.
	OneAdmitterBound int64       `json:"one_admitter_bound"`
	Before           paceWindow  `json:"before_kill"` // the whole window when nothing was killed
	After            *paceWindow `json:"after_kill,omitempty"`
}

type paceWindow struct {
	Admissions int     `json:"admissions"` // heard
	Seconds    float64 `json:"seconds"`
	MeanPerS   float64 `json:"mean_per_s"`
	// MaxIn1s is the most admissions whose orderable_at (the server's
	// admission time) falls in any half-open second [t, t+1s).
	MaxIn1s int `json:"max_in_1s"`
	// MaxIn1sHeard is the same by receive time, counting only waiters
	// that kept their socket (a reconnecting one hears late, in a bunch).
	MaxIn1sHeard int `json:"max_in_1s_heard"`
	// StartsOverBound is how many of the one-second windows started at
	// each admission held more than OneAdmitterBound.
	StartsOverBound int `json:"starts_over_bound"`
}

// pace splits the admissions at killedAt (zero: no kill) and measures each part.
func pace(events []admitEvent, killedAt time.Time, batch int64, every time.Duration) paceReport {
	r := paceReport{}
	if every > 0 {
		r.ConfiguredPerS = float64(batch) * float64(time.Second) / float64(every)
		r.OneAdmitterBound = int64(r.ConfiguredPerS) + batch
	}
	if killedAt.IsZero() {
		r.Before = paceOf(events, r.OneAdmitterBound)
		return r
	}
	var before, after []admitEvent
	for _, e := range events {
		if e.at.Before(killedAt) {
			before = append(before, e)
		} else {
			after = append(after, e)
		}
	}
	r.Before = paceOf(before, r.OneAdmitterBound)
	a := paceOf(after, r.OneAdmitterBound)
	r.After = &a
	return r
}

func paceOf(events []admitEvent, bound int64) paceWindow {
	w := paceWindow{Admissions: len(events)}
	if len(events) == 0 {
		return w
	}
	at := make([]time.Time, 0, len(events))
	var heard []time.Time
	for _, e := range events {
		at = append(at, e.at)
		if !e.reconnected {
			heard = append(heard, e.heard)
		}
	}
	w.MaxIn1s, w.StartsOverBound = maxInWindow(at, time.Second, int(bound))
	w.MaxIn1sHeard, _ = maxInWindow(heard, time.Second, int(bound))
	first, last := slices.MinFunc(at, time.Time.Compare), slices.MaxFunc(at, time.Time.Compare)
	w.Seconds = last.Sub(first).Seconds()
	if w.Seconds > 0 {
		w.MeanPerS = float64(len(at)-1) / w.Seconds
	}
	return w
}

// maxInWindow is the most times in any half-open window [t, t+d), t one of
// the times (a fullest window can always be slid to start at one), and how
// many of those windows hold more than over.
func maxInWindow(ts []time.Time, d time.Duration, over int) (most, starts int) {
	s := slices.Clone(ts)
	slices.SortFunc(s, time.Time.Compare)
	j := 0
	for i := range s {
		for j < len(s) && s[j].Sub(s[i]) < d {
			j++
		}
		n := j - i
		most = max(most, n)
		if over > 0 && n > over {
			starts++
		}
	}
	return most, starts
}
