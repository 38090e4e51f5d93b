package queue_test

import (
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// paceSettings is a room admitting batch every interval, capacity plenty.
func paceSettings(batch int64, interval time.Duration) queue.Settings {
	s := queue.DefaultSettings()
	s.Capacity, s.BatchSize, s.BatchIntervalMS = 1000, batch, interval.Milliseconds()
	return s
}

func waiting(pos int64, rate float64) queue.Ticket {
	return queue.Ticket{Room: "r", ID: "t", State: vocab.StateWaiting, Position: pos, Rate: rate}
}

func TestEstimateFromConfiguredPaceUntilMeasured(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := queue.NewEstimator()
	s := paceSettings(1, 4*time.Second) // 0.25/s
	// Nothing measured yet.
	got := e.Ticket(waiting(17, 0), &s, clock.Now())
	if got.Point != 68*time.Second {
		t.Fatalf("#17 at one per 4 s: %v, want 68s from the configured pace", got.Point)
	}
	if got.Low >= got.Point || got.High <= got.Point || got.High-got.Low < 40*time.Second {
		t.Errorf("unmeasured range %v–%v: want a wide range around 68s", got.Low, got.High)
	}
	// A full window later the measure (0.2/s: capacity holds the line back)
	// is trusted, and the range narrows.
	for range 60 {
		clock.Advance(2 * time.Second)
		got = e.Ticket(waiting(17, 0.2), &s, clock.Now())
	}
	if d := got.Point - 85*time.Second; d < -time.Second || d > time.Second {
		t.Errorf("after two minutes measured at 0.2/s: %v, want 85s", got.Point)
	}
	if w := got.High - got.Low; w >= 40*time.Second {
		t.Errorf("measured range %v–%v still %v wide", got.Low, got.High, w)
	}
}

func TestEstimateTrustsTheStoreForARoomFirstSeen(t *testing.T) {
	// A server that just started: the room's pace is not new, only to this
	// server, and the store's measure (capacity holds it to 0.2/s) counts.
	e := queue.NewEstimator()
	s := paceSettings(1, 4*time.Second)
	if got := e.Ticket(waiting(17, 0.2), &s, time.Now()); got.Point != 85*time.Second {
		t.Errorf("first read on a fresh server: %v, want 85s from the store's measure", got.Point)
	}
}

func TestEstimateRebasesAtOnceOnPaceChange(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := queue.NewEstimator()
	slow := paceSettings(1, 4*time.Second)
	for range 60 {
		e.Ticket(waiting(29, 0.25), &slow, clock.Now())
		clock.Advance(2 * time.Second)
	}
	// The operator speeds up to 2/s; the store's last-minute rate still
	// says 0.25/s, but #29 is in within 15 s, not 2 minutes.
	fast := paceSettings(2, time.Second)
	e.Observe("r", &fast, clock.Now())
	got := e.Ticket(waiting(29, 0.25), &fast, clock.Now())
	if got.Point > 20*time.Second {
		t.Errorf("right after a speed-up #29 reads %v, want about 15s", got.Point)
	}
	// Paused: nothing to say. Unpaused at the same pace: the same estimate
	// at once, not one dragged down by the pause inside the measured window.
	paused := fast
	paused.Paused = true
	if got := e.Ticket(waiting(29, 2), &paused, clock.Now()); got.Known {
		t.Errorf("paused room estimated %v", got.Point)
	}
	clock.Advance(30 * time.Second)
	e.Ticket(waiting(29, 1), &paused, clock.Now())
	got = e.Ticket(waiting(29, 1), &fast, clock.Now())
	if d := got.Point - 14500*time.Millisecond; d < -time.Second || d > time.Second {
		t.Errorf("right after unpausing #29 reads %v, want 14.5s from the pace", got.Point)
	}
}

func TestEstimateKeepsACapacityBoundAcrossASpeedUp(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := queue.NewEstimator()
	s := paceSettings(1, time.Second) // 1/s allowed, 0.5/s met: capacity is full
	for range 90 {
		e.Ticket(waiting(50, 0.5), &s, clock.Now())
		clock.Advance(time.Second)
	}
	s.BatchSize = 4 // faster batches do not free slots sooner
	got := e.Ticket(waiting(50, 0.5), &s, clock.Now())
	if d := got.Point - 100*time.Second; d < -5*time.Second || d > 5*time.Second {
		t.Errorf("speed-up of a room held back by capacity: %v, want still about 100s", got.Point)
	}
}

func TestEstimateSmoothsTheMeasuredRate(t *testing.T) {
	clock := clockwork.NewFakeClock()
	e := queue.NewEstimator()
	s := paceSettings(1, time.Second)
	for range 120 {
		e.Ticket(waiting(60, 1), &s, clock.Now())
		clock.Advance(time.Second)
	}
	// One reading at twice the rate (a burst) moves the estimate a little,
	// not from 60 s to 30 s.
	prev := e.Ticket(waiting(60, 1), &s, clock.Now())
	clock.Advance(2 * time.Second)
	got := e.Ticket(waiting(60, 2), &s, clock.Now())
	if got.Point < 50*time.Second || got.Point >= prev.Point {
		t.Errorf("one reading of double rate took the estimate from %v to %v: want a small step down", prev.Point, got.Point)
	}
	// A rate that stays doubled is followed within a minute.
	for range 30 {
		clock.Advance(2 * time.Second)
		got = e.Ticket(waiting(60, 2), &s, clock.Now())
	}
	if d := got.Point - 30*time.Second; d < -time.Second || d > time.Second {
		t.Errorf("after a minute at twice the rate: %v, want 30s", got.Point)
	}
}

func TestEstimateUnknownAndEdges(t *testing.T) {
	now := time.Now()
	e := queue.NewEstimator()
	s := paceSettings(10, 200*time.Millisecond)
	for _, tk := range []queue.Ticket{
		{Room: "r", State: vocab.StateAdmitted},
		{Room: "r", State: vocab.StateWaiting}, // no position
		{Room: "r", State: vocab.StateExpired, Position: 3},
	} {
		if got := e.Ticket(tk, &s, now); got.Known {
			t.Errorf("%+v: estimated %v", tk, got)
		}
	}
	if got := e.Wait("r", &s, 50, 0, now); !got.Known || got.Point != 0 {
		t.Errorf("nobody waiting: %+v, want a known zero", got)
	}
	zero := paceSettings(0, time.Second) // capacity or batch of 0: nobody moves
	zero.Capacity = 0
	if got := e.Wait("z", &zero, 0, 5, now); got.Known {
		t.Errorf("a room that admits nobody estimated %v", got.Point)
	}
	// Absurd rates and positions neither panic nor overflow.
	for _, rate := range []float64{-1, 1e-300, 1e300} {
		got := e.Wait("x", &s, rate, 1<<62, now)
		if got.Point < 0 || got.Low < 0 || got.High < got.Point || got.Low > got.Point {
			t.Errorf("rate %g: %+v", rate, got)
		}
	}
}

// BenchmarkEstimatorTicket: every push to every waiter asks the estimator,
// from many goroutines at once.
func BenchmarkEstimatorTicket(b *testing.B) {
	e := queue.NewEstimator()
	s := paceSettings(10, 200*time.Millisecond)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		i := int64(0)
		for pb.Next() {
			i++
			e.Ticket(waiting(1+i%5000, 40), &s, start.Add(time.Duration(i)*time.Microsecond))
		}
	})
}
