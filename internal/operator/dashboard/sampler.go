package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// statsSource is what the sampler reads each round. Rooms' settings are the
// line's (*queue.Line holds them, in its cache and the rooms snapshot): the
// sampler keeps only its samples and asks for settings when it needs them.
type statsSource interface {
	ListRooms(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, room string, now time.Time) (queue.Stats, error)
	// Room reads a room's settings through the line's cache.
	Settings(ctx context.Context, room string) (queue.Settings, error)
	// CachedSettings is the line's last known settings, without asking Redis.
	CachedSettings(room string) (queue.Settings, bool)
}

type samplerConfig struct {
	src    statsSource
	outbox OutboxCounter // nil: none
	clock  clockwork.Clock
	log    *slog.Logger
	every  time.Duration // between rounds
	keep   time.Duration // history kept for the charts
	window time.Duration // rates are averaged over this
	// hist keeps each room's minutes for the sale's history; nil: none.
	hist History
	// degraded says whether this server answers in degraded mode now; nil: never.
	degraded func() bool
}

// sampler reads every room's counters every few seconds and keeps the last
// 15 minutes in memory. Rates per second come from successive totals, so
// they need nothing from the admission path; the same samples feed the
// charts' history and the live stream.
type sampler struct {
	samplerConfig
	after func() // called after each round, e.g. to push

	// eta is the waiters' estimator (queue.Estimator), for the wait at
	// the back: re-based on a pace change, smoothed between samples.
	eta *queue.Estimator

	mu       sync.Mutex
	rooms    map[string]*roomSeries
	order    []string // rooms as last listed
	listed   bool     // the last round could list the rooms
	outboxes []outboxSample

	// recorded is the last minute whose reading this server sent to the
	// history, per room (only round touches it).
	recorded map[string]time.Time
}

type roomSeries struct {
	samples []sample // oldest first
}

// sample is one reading of a room, with the rates derived at the time.
type sample struct {
	at                           time.Time
	waiting, active, capacity    int64
	scheduled                    int64 // in the pre-queue of a scheduled opening
	entered, admitted, abandoned int64
	admittedRate, entryRate      *float64
	abandonRate, tailETA         *float64
	// Slots freed before their session's end: never used (arrival_window_s)
	// and left idle (idle_after_s), totals and per second.
	noShows, idle        int64
	noShowRate, idleRate *float64
	// reading is the room's counters as the history keeps them.
	reading history.Reading
}

type outboxSample struct {
	at time.Time
	c  outbox.Counts
}

func newSampler(cfg samplerConfig) *sampler {
	// Redis is assumed up until a round says otherwise.
	return &sampler{samplerConfig: cfg, rooms: map[string]*roomSeries{}, listed: true, eta: queue.NewEstimator(),
		recorded: map[string]time.Time{}}
}

// run samples at once, then every interval, until ctx ends.
func (s *sampler) run(ctx context.Context) error {
	t := s.clock.NewTicker(s.every)
	defer t.Stop()
	for {
		s.round(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.Chan():
		}
	}
}

// round samples every room once; a room that fails keeps its history.
func (s *sampler) round(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(s.every, time.Second))
	defer cancel()
	now := s.clock.Now()
	rooms, err := s.src.ListRooms(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Debug("dashboard: sample: list rooms", "err", err)
		}
		s.mu.Lock()
		s.listed = false
		s.mu.Unlock()
	} else {
		s.sampleRooms(ctx, rooms, now)
	}
	if s.outbox != nil {
		if c, err := s.outbox.Counts(ctx); err == nil {
			s.mu.Lock()
			s.outboxes = trim(append(s.outboxes, outboxSample{at: now, c: c}), func(o outboxSample) time.Time { return o.at }, now.Add(-s.keep))
			s.mu.Unlock()
		}
	}
	s.record(ctx, now)
	if s.after != nil {
		s.after()
	}
}

// record sends the history this round's figures: each room's reading once
// a minute (the first server to send a minute wins), and this server's
// degraded time, kept until Redis takes them.
func (s *sampler) record(ctx context.Context, now time.Time) {
	if s.hist == nil {
		return
	}
	minute := now.UTC().Truncate(time.Minute)
	s.mu.Lock()
	order := slices.Clone(s.order)
	var due []sample
	var dueRooms []string
	for _, room := range order {
		rs := s.rooms[room]
		if rs == nil || len(rs.samples) == 0 || s.recorded[room].Equal(minute) {
			continue
		}
		if last := rs.samples[len(rs.samples)-1]; last.at.Equal(now) {
			due, dueRooms = append(due, last), append(dueRooms, room)
		}
	}
	s.mu.Unlock()
	if s.degraded != nil && s.degraded() {
		secs := max(int64(s.every.Round(time.Second)/time.Second), 1)
		for _, room := range order {
			s.hist.Add(room, now, history.DegradedSeconds, secs)
		}
	}
	for i, smp := range due {
		if _, err := s.hist.Record(ctx, dueRooms[i], now, smp.reading); err != nil {
			s.log.Debug("dashboard: history", "room", dueRooms[i], "err", err)
			continue
		}
		s.recorded[dueRooms[i]] = minute
	}
	if err := s.hist.Flush(ctx); err != nil {
		s.log.Debug("dashboard: history", "err", err)
	}
}

func (s *sampler) sampleRooms(ctx context.Context, rooms []string, now time.Time) {
	type reading struct {
		room     string
		settings queue.Settings
		stats    queue.Stats
	}
	var got []reading
	for _, room := range rooms {
		st, err := s.src.Settings(ctx, room)
		if errors.Is(err, queue.ErrRoomNotFound) {
			continue // deleted meanwhile
		}
		var stats queue.Stats
		if err == nil {
			stats, err = s.src.Stats(ctx, room, now)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Debug("dashboard: sample", "room", room, "err", err)
			}
			continue
		}
		got = append(got, reading{room, st, stats})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listed = true
	s.order = slices.Clone(rooms)
	seen := make(map[string]bool, len(rooms))
	for _, r := range rooms {
		seen[r] = true
	}
	for room := range s.rooms {
		if !seen[room] {
			delete(s.rooms, room)
		}
	}
	for _, r := range got {
		rs := s.rooms[r.room]
		if rs == nil {
			rs = &roomSeries{}
			s.rooms[r.room] = rs
		}
		smp := sample{
			at: now, waiting: r.stats.Waiting, scheduled: r.stats.Scheduled, active: r.stats.Active, capacity: r.settings.Capacity,
			entered: r.stats.EnteredTotal, admitted: r.stats.AdmittedTotal, abandoned: r.stats.AbandonedTotal,
			noShows: r.stats.NoShowTotal, idle: r.stats.IdleTotal, reading: history.FromStats(r.stats),
		}
		s.derive(&smp, rs.samples)
		smp.tailETA = s.tailWait(r.room, &r.settings, r.stats, now)
		rs.samples = trim(append(rs.samples, smp), func(x sample) time.Time { return x.at }, now.Add(-s.keep))
	}
}

// derive fills a new sample's rates from the oldest earlier sample within
// the window (or the one just before, when samples came slower than the
// window). A total that went down means the counters were reset (the room
// was recreated, Redis lost its data): the rate is then unknown.
func (s *sampler) derive(cur *sample, prev []sample) {
	if len(prev) == 0 {
		return
	}
	from := prev[len(prev)-1]
	for i := len(prev) - 1; i >= 0 && !prev[i].at.Before(cur.at.Add(-s.window)); i-- {
		from = prev[i]
	}
	dt := cur.at.Sub(from.at).Seconds()
	if dt <= 0 {
		return
	}
	start := len(prev) - 1
	for start > 0 && !prev[start-1].at.Before(cur.at.Add(-s.window)) {
		start--
	}
	// A slow room (1 admission per 30 s) would read 0 in most windows and
	// a burst in the rest: with fewer than fewEvents in the window, the
	// rate looks further back, up to slowWindow, until it has them.
	rate := func(get func(*sample) int64) *float64 {
		a, b := get(&from), get(cur)
		if b < a {
			return nil
		}
		span := dt
		for i := start - 1; i >= 0 && b-a < fewEvents && !prev[i].at.Before(cur.at.Add(-slowWindow)); i-- {
			if get(&prev[i]) > a {
				break // a reset in between
			}
			a, span = get(&prev[i]), cur.at.Sub(prev[i].at).Seconds()
		}
		r := float64(b-a) / span
		return &r
	}
	cur.admittedRate = rate(func(x *sample) int64 { return x.admitted })
	cur.entryRate = rate(func(x *sample) int64 { return x.entered })
	cur.abandonRate = rate(func(x *sample) int64 { return x.abandoned })
	cur.noShowRate = rate(func(x *sample) int64 { return x.noShows })
	cur.idleRate = rate(func(x *sample) int64 { return x.idle })
}

// A rate with fewer than fewEvents in its window looks back up to slowWindow.
const (
	fewEvents  = 3
	slowWindow = 5 * time.Minute
)

// tailWait is how long the last in line will wait, in seconds, by the
// estimate the waiters get: not waiting ÷ the last seconds' rate, which
// swings with every batch. Nobody waiting waits nothing; a paused line has
// no estimate.
func (s *sampler) tailWait(room string, st *queue.Settings, stats queue.Stats, now time.Time) *float64 {
	e := s.eta.Wait(room, st, stats.AdmittedRate, stats.Waiting, now)
	if !e.Known {
		return nil
	}
	v := e.Point.Seconds()
	return &v
}

// trim drops items older than cut from the front of a time-ordered slice.
func trim[T any](xs []T, at func(T) time.Time, cut time.Time) []T {
	i := 0
	for i < len(xs) && at(xs[i]).Before(cut) {
		i++
	}
	if i == 0 {
		return xs
	}
	return slices.Delete(xs, 0, i)
}

// roomState is what the sampler knows of one room, with the line's last
// known settings of it.
type roomState struct {
	settings queue.Settings
	latest   sample
	series   []sample
}

// room returns a room's last known settings, its latest sample and, with
// history, a copy of every sample kept.
func (s *sampler) room(room string, history bool) (roomState, bool) {
	s.mu.Lock()
	rs := s.rooms[room]
	if rs == nil || len(rs.samples) == 0 {
		s.mu.Unlock()
		return roomState{}, false
	}
	st := roomState{latest: rs.samples[len(rs.samples)-1]}
	if history {
		st.series = slices.Clone(rs.samples)
	}
	s.mu.Unlock()
	var ok bool
	st.settings, ok = s.src.CachedSettings(room)
	return st, ok
}

// overview returns every room's latest state in listing order, and whether
// the last round could list the rooms.
func (s *sampler) overview() ([]string, map[string]roomState, bool) {
	s.mu.Lock()
	out := make(map[string]roomState, len(s.rooms))
	for id, rs := range s.rooms {
		if len(rs.samples) > 0 {
			out[id] = roomState{latest: rs.samples[len(rs.samples)-1]}
		}
	}
	order, listed := slices.Clone(s.order), s.listed
	s.mu.Unlock()
	for id, st := range out {
		var ok bool
		if st.settings, ok = s.src.CachedSettings(id); !ok {
			delete(out, id) // the line forgot it: deleted
			continue
		}
		out[id] = st
	}
	return order, out, listed
}

// outboxView is the outbox's latest counts and the results of the last
// minute (of the history there is, when shorter); nil before any sample.
func (s *sampler) outboxView() *templates.AdminOutbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.outboxes)
	if n == 0 {
		return nil
	}
	cur := s.outboxes[n-1]
	v := &templates.AdminOutbox{Pending: cur.c.Accepted, Published: cur.c.Published, Processed: cur.c.Processed, Rejected: cur.c.Rejected}
	if n < 2 {
		return v
	}
	from := cur
	for i := n - 1; i >= 0 && !s.outboxes[i].at.Before(cur.at.Add(-time.Minute)); i-- {
		from = s.outboxes[i]
	}
	processed, rejected := max(cur.c.Processed-from.c.Processed, 0), max(cur.c.Rejected-from.c.Rejected, 0)
	v.MinuteProcessed, v.MinuteRejected = &processed, &rejected
	v.MinuteSpanSeconds = int64(cur.at.Sub(from.at).Seconds())
	return v
}

// refresh re-reads one room after a change made here or announced by
// another server: its settings at once (through the line, which then holds
// them), and a first sample for a new room, so pages and pushes agree
// before the next round. A known room gets no extra sample: the charts keep
// their even spacing.
func (s *sampler) refresh(ctx context.Context, room string) {
	st, err := s.src.Settings(ctx, room)
	if errors.Is(err, queue.ErrRoomNotFound) {
		s.forget(room)
		return
	}
	if err != nil {
		return // the next round tries again
	}
	s.eta.Observe(room, &st, s.clock.Now()) // a new pace counts at once
	s.mu.Lock()
	known := s.rooms[room] != nil
	s.mu.Unlock()
	if known {
		return
	}
	now := s.clock.Now()
	stats, err := s.src.Stats(ctx, room, now)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rooms[room] != nil {
		return // a round got there first
	}
	s.rooms[room] = &roomSeries{samples: []sample{{
		at: now, waiting: stats.Waiting, scheduled: stats.Scheduled, active: stats.Active, capacity: st.Capacity,
		entered: stats.EnteredTotal, admitted: stats.AdmittedTotal, abandoned: stats.AbandonedTotal,
	}}}
	if !slices.Contains(s.order, room) {
		s.order = append(s.order, room)
	}
}

// forget drops a deleted room at once rather than at the next round.
func (s *sampler) forget(room string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rooms, room)
	s.order = slices.DeleteFunc(s.order, func(r string) bool { return r == room })
}

// redisUp reports whether the last round could read the rooms.
func (s *sampler) redisUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed
}
