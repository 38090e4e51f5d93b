package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/outbox"
)

// fakeRooms is a statsSource whose counters the test sets.
type fakeRooms struct {
	mu    sync.Mutex
	stats map[string]queue.Stats
	down  bool
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

func (f *fakeRooms) GetRoom(_ context.Context, room string) (queue.Settings, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.stats[room]; !ok {
		return queue.Settings{}, queue.ErrRoomNotFound
	}
	return queue.DefaultSettings(), nil
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
	if st.latest.admittedRate != nil || st.latest.tailETA != nil {
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
	if *l.admittedRate != 5 || *l.entryRate != 10 || *l.abandonRate != 0.5 || *l.tailETA != 8 {
		t.Errorf("rates %v %v %v, tail %v: want 5, 10, 0.5 and 8 s", *l.admittedRate, *l.entryRate, *l.abandonRate, *l.tailETA)
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

func TestTailETA(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		waiting int64
		rate    *float64
		want    *float64
	}{
		{0, nil, f(0)},
		{0, f(0), f(0)},
		{10, nil, nil},
		{10, f(0), nil}, // a line that does not move has no estimate
		{10, f(4), f(2.5)},
	} {
		got := tailETA(c.waiting, c.rate)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("tailETA(%d, %v) = %v, want %v", c.waiting, c.rate, got, c.want)
		}
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
