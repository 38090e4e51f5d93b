package queue

import (
	"math"
	"sync"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// RateWindow is how far back the stores measure a room's admitted rate
// (tick.lua, memstore): a measure describes a pace only once the pace has
// lasted this long.
const RateWindow = time.Minute

// rateSmoothing is the time constant of the smoothed rate, so one uneven
// reading does not move every waiter's estimate at once.
const rateSmoothing = 15 * time.Second

// estimatorIdle is how long a room nobody asked about is kept: the estimator
// holds the rooms in use, not every room there ever was.
const estimatorIdle = 10 * time.Minute

// boundBelow: a pace measured below this share of its configured rate was
// held back by something else (capacity, few arrivals), and a new pace of
// the same capacity is expected to meet the same bound.
const boundBelow = 0.8

// Estimate is a waiter's expected wait: a point, and the range the wait most
// likely falls in, wider while the pace is not yet measured. Known is false
// when nobody moves (the room is paused) or the ticket is not waiting.
type Estimate struct {
	Known            bool
	Point, Low, High time.Duration
}

// Estimator estimates waits from a room's configured pace until the line has
// a measured rate, then from a blend that trusts the measure as it covers
// the new pace; a pace change or a pause re-bases it at once. Its state is a
// few numbers per room in this process: every server derives it from the
// settings and the rate the store already measures, so nothing is written
// per waiter. Servers see a change within one settings refresh of each other.
type Estimator struct {
	mu    sync.Mutex
	rooms map[string]*roomPace
	swept time.Time
}

// NewEstimator returns an estimator that knows no room yet.
func NewEstimator() *Estimator { return &Estimator{rooms: make(map[string]*roomPace)} }

// pace is what of a room's settings its admission speed depends on.
type pace struct {
	batch, intervalMS, capacity int64
	paused                      bool
}

func paceOf(s *Settings) pace {
	return pace{batch: s.BatchSize, intervalMS: s.BatchIntervalMS, capacity: s.Capacity, paused: s.Paused}
}

// rate is the admissions per second the pace allows: a batch per interval,
// never more than the capacity per interval.
func (p pace) rate() float64 {
	if p.paused || p.intervalMS <= 0 {
		return 0
	}
	return float64(max(min(p.batch, p.capacity), 0)) * 1000 / float64(p.intervalMS)
}

type roomPace struct {
	pace  pace
	since time.Time // when this pace began, as this process saw it
	prior float64   // the rate expected of this pace until it is measured
	rate  float64   // the smoothed rate
	at    time.Time // the last update
	// moved is the smoothed rate of the last pace that was not paused, so
	// an unpause or a new pace starts from what that pace met.
	moved     float64
	movedPace pace
}

// rebase starts a new pace at now: the estimate follows the new prior at
// once, not the old pace's measure.
func (r *roomPace) rebase(p pace, now time.Time) {
	if !r.pace.paused {
		r.moved, r.movedPace = r.rate, r.pace
	}
	r.pace, r.since, r.at = p, now, now
	r.prior = p.rate()
	// A pace held back below its own rate (by capacity, say) meets the same
	// bound after a speed-up of the same capacity.
	if old := r.movedPace; r.moved > 0 && old.capacity == p.capacity && r.moved < boundBelow*old.rate() {
		r.prior = min(r.prior, r.moved)
	}
	r.rate = r.prior
}

// trust is the share of the measure that describes the current pace.
func (r *roomPace) trust(now time.Time) float64 {
	return min(max(float64(now.Sub(r.since))/float64(RateWindow), 0), 1)
}

// update blends a measured rate into the smoothed rate at now.
func (r *roomPace) update(measured float64, now time.Time) {
	if r.pace.paused {
		r.at = now
		return
	}
	target := r.prior
	if measured > 0 && !math.IsInf(measured, 0) && !math.IsNaN(measured) {
		w := r.trust(now)
		target = w*measured + (1-w)*r.prior
	}
	// A slower pace is believed at once, a faster one eased into: a waiter
	// is told a later time rather than promised one the line will not keep
	// (a room that fills at an opening slows to what its slots free).
	if target < r.rate {
		r.rate, r.at = target, now
	} else if dt := now.Sub(r.at); dt > 0 {
		r.rate += (target - r.rate) * (1 - math.Exp(-float64(dt)/float64(rateSmoothing)))
		r.at = now
	}
}

// Observe notes a room's settings at now, so a pace change re-bases the
// estimate when this server learns of it, whether or not anyone asks.
func (e *Estimator) Observe(room string, s *Settings, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observe(room, s, now)
}

// observe returns the room's state at now, and whether it is new here.
func (e *Estimator) observe(room string, s *Settings, now time.Time) (*roomPace, bool) {
	e.sweep(now)
	p := paceOf(s)
	r := e.rooms[room]
	switch {
	case r == nil:
		// A room first seen here (this server just started) has likely had
		// its pace for long: the store's measure is trusted at once.
		r = &roomPace{pace: p, since: now.Add(-RateWindow), at: now, prior: p.rate()}
		r.rate = r.prior
		e.rooms[room] = r
		return r, true
	case r.pace != p:
		r.rebase(p, now)
	}
	return r, false
}

// sweep forgets rooms nobody asked about lately, at most once a minute.
func (e *Estimator) sweep(now time.Time) {
	if now.Sub(e.swept) < time.Minute {
		return
	}
	e.swept = now
	for id, r := range e.rooms {
		if now.Sub(r.at) > estimatorIdle {
			delete(e.rooms, id)
		}
	}
}

// Ticket estimates a ticket's wait at now from its position and the rate
// the store measured; it is unknown unless the ticket waits in a room that
// moves.
func (e *Estimator) Ticket(t Ticket, s *Settings, now time.Time) Estimate {
	if t.State != vocab.StateWaiting || t.Position <= 0 {
		return Estimate{}
	}
	return e.Wait(t.Room, s, t.Rate, t.Position, now)
}

// Wait estimates how long the waiter at position of room waits from now,
// given the admitted rate the store measured. Position 0 waits nothing.
func (e *Estimator) Wait(room string, s *Settings, measured float64, position int64, now time.Time) Estimate {
	if s.Paused {
		e.Observe(room, s, now)
		return Estimate{}
	}
	e.mu.Lock()
	r, fresh := e.observe(room, s, now)
	if fresh && measured > 0 && !math.IsInf(measured, 0) {
		r.rate = measured // nothing to smooth yet
	}
	r.update(measured, now)
	rate, w := r.rate, r.trust(now)
	e.mu.Unlock()
	if measured <= 0 {
		w = 0 // nothing measured: the range stays wide
	}
	if position <= 0 {
		return Estimate{Known: true}
	}
	if rate <= 0 {
		return Estimate{}
	}
	return spread(position, rate, w, time.Duration(s.BatchIntervalMS)*time.Millisecond)
}

// spread is the estimate of position at rate: the point, and a range whose
// width is the rate's uncertainty (±15% once measured, ±50% before) plus
// one batch interval, since admissions come a batch at a time.
func spread(position int64, rate, trust float64, interval time.Duration) Estimate {
	secs := func(f float64) time.Duration {
		return time.Duration(min(f, float64(math.MaxInt64/2)/float64(time.Second)) * float64(time.Second))
	}
	u := 0.15 + 0.35*(1-trust)
	p := float64(position)
	return Estimate{
		Known: true,
		Point: secs(p / rate),
		Low:   max(secs(p/(rate*(1+u)))-interval, 0),
		High:  secs(p/(rate*(1-u))) + interval,
	}
}
