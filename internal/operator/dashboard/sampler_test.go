package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/queue"
)

// fakeRooms is a statsSource whose counters the test sets.
type fakeRooms struct {
	mu       sync.Mutex
	stats    map[string]queue.Stats
	settings map[string]queue.Settings // DefaultSettings for a room not in it
	cached   map[string]queue.Settings // what Room read last, as the line keeps it
	down     bool
}

func (f *fakeRooms) ListRooms(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errors.New("connection refused")
	}
	var out []string
	for id := range f.stats {
		out = append(out, id)
	}
	return out, nil
}

// Room reads a room's settings and keeps them, as the line's cache does.
func (f *fakeRooms) Settings(_ context.Context, room string) (queue.Settings, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.stats[room]; !ok {
		return queue.Settings{}, queue.ErrRoomNotFound
	}
	s, ok := f.settings[room]
	if !ok {
		s = queue.DefaultSettings()
	}
	if f.cached == nil {
		f.cached = map[string]queue.Settings{}
	}
	f.cached[room] = s
	return s, nil
}

func (f *fakeRooms) CachedSettings(room string) (queue.Settings, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.cached[room]
	return s, ok
}

func (f *fakeRooms) setRoom(room string, s queue.Settings) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settings[room] = s
}

func (f *fakeRooms) Stats(_ context.Context, room string, _ time.Time) (queue.Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats[room], nil
}

func (f *fakeRooms) set(room string, fn func(*queue.Stats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats[room]
	fn(&s)
	f.stats[room] = s
}

type fakeOutbox struct{ c outbox.Counts }

func (f *fakeOutbox) Counts(context.Context) (outbox.Counts, error) { return f.c, nil }

func newTestSampler(src *fakeRooms, ob OutboxCounter) (*sampler, *clockwork.FakeClock) {
	clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC))
	return newSampler(samplerConfig{
		src: src, outbox: ob, clock: clock, log: slog.New(slog.DiscardHandler),
		every: 2 * time.Second, keep: chartSpan, window: 10 * time.Second,
	}), clock
}

// step advances the clock by one interval and samples.
func step(s *sampler, clock *clockwork.FakeClock) {
	clock.Advance(s.every)
	s.round(context.Background())
}

func TestRatesComeFromSuccessiveTotalsOverTheWindow(t *testing.T) {
	src := &fakeRooms{stats: map[string]queue.Stats{"r": {}}}
	s, clock := newTestSampler(src, nil)
	s.round(context.Background())
	st, _ := s.room("r", false)
	if st.latest.admittedRate != nil {
		t.Fatalf("first sample has rates: %+v", st.latest)
	}
	// 10 admitted, 20 entered and 1 abandoned every 2 s, 40 waiting.
	for range 8 {
		src.set("r", func(x *queue.Stats) {
			x.AdmittedTotal += 10
			x.EnteredTotal += 20
			x.AbandonedTotal++
			x.Waiting = 40
		})
		step(s, clock)
	}
	st, _ = s.room("r", true)
	l := st.latest
	if *l.admittedRate != 5 || *l.entryRate != 10 || *l.abandonRate != 0.5 {
		t.Errorf("rates %v %v %v: want 5, 10 and 0.5", *l.admittedRate, *l.entryRate, *l.abandonRate)
	}
	if len(st.series) != 9 {
		t.Errorf("%d samples, want 9", len(st.series))
	}

	// The pace halves: within one window the rate is between, after it the new one.
	src.set("r", func(x *queue.Stats) { x.AdmittedTotal += 5 })
	step(s, clock)
	st, _ = s.room("r", false)
	if r := *st.latest.admittedRate; r <= 2.5 || r >= 5 {
		t.Errorf("one sample after the change: %v, want between 2.5 and 5", r)
	}
	for range 5 {
		src.set("r", func(x *queue.Stats) { x.AdmittedTotal += 5 })
		step(s, clock)
	}
	st, _ = s.room("r", false)
	if r := *st.latest.admittedRate; r != 2.5 {
		t.Errorf("a window after the change: %v, want 2.5", r)
	}
}

// TestTailWaitFollowsThePaceNotTheBatches: the wait at the back is the
// waiters' estimate: steady while batches come unevenly, re-based at once
// when the pace changes, nothing while paused.
func TestTailWaitFollowsThePaceNotTheBatches(t *testing.T) {
	st := queue.DefaultSettings()
	st.Capacity, st.BatchSize, st.BatchIntervalMS = 1000, 1, 4000 // 0.25/s
	src := &fakeRooms{stats: map[string]queue.Stats{"r": {Waiting: 150}}, settings: map[string]queue.Settings{"r": st}}
	s, clock := newTestSampler(src, nil)
	s.round(context.Background())
	tail := func() *float64 {
		r, _ := s.room("r", false)
		return r.latest.tailETA
	}
	if got := tail(); got == nil || *got != 600 {
		t.Fatalf("first sample: tail %v, want 600 s from the configured pace", got)
	}
	// One admission every 4 s sampled every 2 s: 0 or 1 a sample; the
	// store measures 0.25/s.
	var lo, hi float64 = 1e9, 0
	for i := range 60 {
		src.set("r", func(x *queue.Stats) { x.AdmittedTotal += int64(i % 2); x.AdmittedRate = 0.25 })
		step(s, clock)
		if i >= 55 {
			lo, hi = min(lo, *tail()), max(hi, *tail())
		}
	}
	if lo < 570 || hi > 630 {
		t.Errorf("wait at the back over 10 s: %.0f–%.0f s, want steady at 600 s", lo, hi)
	}

	st.BatchIntervalMS = 1000 // four times faster; the store still says 0.25/s
	src.setRoom("r", st)
	s.refresh(context.Background(), "r")
	step(s, clock)
	if got := tail(); got == nil || *got > 200 {
		t.Errorf("right after a speed-up to 1/s: tail %v, want about 150 s", got)
	}

	st.Paused = true
	src.setRoom("r", st)
	s.refresh(context.Background(), "r")
	step(s, clock)
	if got := tail(); got != nil {
		t.Errorf("paused: tail %v, want none", *got)
	}

	st.Paused = false
	src.setRoom("r", st)
	src.set("r", func(x *queue.Stats) { x.Waiting = 0 })
	step(s, clock)
	if got := tail(); got == nil || *got != 0 {
		t.Errorf("nobody waiting: tail %v, want 0", got)
	}
}

func TestResetCountersMakeTheRateUnknown(t *testing.T) {
	src := &fakeRooms{stats: map[string]queue.Stats{"r": {AdmittedTotal: 100, EnteredTotal: 100}}}
	s, clock := newTestSampler(src, nil)
	s.round(context.Background())
	src.set("r", func(x *queue.Stats) { *x = queue.Stats{AdmittedTotal: 3, EnteredTotal: 200} })
	step(s, clock)
	st, _ := s.room("r", false)
	if st.latest.admittedRate != nil || st.latest.entryRate == nil {
		t.Errorf("after a reset: admitted %v, entered %v", st.latest.admittedRate, st.latest.entryRate)
	}
}

func TestFifteenMinutesAreKeptAndDeletedRoomsDropped(t *testing.T) {
	src := &fakeRooms{stats: map[string]queue.Stats{"r": {}, "gone": {}}}
	s, clock := newTestSampler(src, nil)
	s.round(context.Background())
	for range 16 * 30 { // 16 minutes of 2 s samples
		step(s, clock)
	}
	st, _ := s.room("r", true)
	oldest := st.series[0].at
	if span := clock.Now().Sub(oldest); span > chartSpan || span < chartSpan-s.every {
		t.Errorf("history spans %v, want 15 minutes", span)
	}
	if n := len(st.series); n != int(chartSpan/s.every)+1 {
		t.Errorf("%d samples kept", n)
	}
	src.mu.Lock()
	delete(src.stats, "gone")
	src.mu.Unlock()
	step(s, clock)
	if _, ok := s.room("gone", false); ok {
		t.Error("a deleted room is still sampled")
	}
	order, _, listed := s.overview()
	if len(order) != 1 || !listed {
		t.Errorf("overview %v listed=%v", order, listed)
	}
	// Redis down: the rooms stay as last seen, marked as such.
	src.mu.Lock()
	src.down = true
	src.mu.Unlock()
	step(s, clock)
	if _, ok := s.room("r", false); !ok || s.redisUp() {
		t.Errorf("Redis down: room kept %v, redis up %v", ok, s.redisUp())
	}
}

func TestOutboxResultsOfTheLastMinute(t *testing.T) {
	ob := &fakeOutbox{}
	s, clock := newTestSampler(&fakeRooms{stats: map[string]queue.Stats{}}, ob)
	if s.outboxView() != nil {
		t.Fatal("an outbox view before any sample")
	}
	s.round(context.Background())
	if v := s.outboxView(); v == nil || v.MinuteProcessed != nil {
		t.Fatalf("one sample: %+v", v)
	}
	// 3 processed and 1 rejected every 2 s, for 2 minutes.
	for range 60 {
		ob.c.Processed += 3
		ob.c.Rejected++
		ob.c.Accepted = 7
		step(s, clock)
	}
	v := s.outboxView()
	if v.Pending != 7 || v.Processed != 180 || *v.MinuteProcessed != 90 || *v.MinuteRejected != 30 || v.MinuteSpanSeconds != 60 {
		t.Errorf("outbox view %+v (minute %d/%d)", v, *v.MinuteProcessed, *v.MinuteRejected)
	}
}

// A room admitting one every 30 s reads as that, not as 0 in most windows
// and a burst of 0.1/s in the rest.
func TestSlowRoomsRateLooksFurtherBack(t *testing.T) {
	src := &fakeRooms{stats: map[string]queue.Stats{"r": {}}}
	s, clock := newTestSampler(src, nil)
	s.round(context.Background())
	var rates []float64
	for i := range 150 { // 5 minutes of 2 s rounds
		if i%15 == 14 {
			src.set("r", func(x *queue.Stats) { x.AdmittedTotal++ })
		}
		step(s, clock)
		st, _ := s.room("r", false)
		if i >= 60 {
			rates = append(rates, *st.latest.admittedRate)
		}
	}
	for _, r := range rates {
		if r < 1.0/45 || r > 1.0/20 {
			t.Fatalf("a rate of %v/s (1 per %.0f s), want about 1 per 30 s", r, 1/r)
		}
	}
	// A quick room keeps the short window: its rate follows a change within it.
	src.set("r", func(x *queue.Stats) { x.AdmittedTotal += 100 })
	step(s, clock)
	if st, _ := s.room("r", false); *st.latest.admittedRate < 5 {
		t.Errorf("a burst of 100 in 2 s reads %v/s", *st.latest.admittedRate)
	}
}
