// Package history keeps a room's figures minute by minute for the whole
// life of a sale, in Redis, shared by every server, for the dashboard's
// charts over any range and the sale report (report.go).
//
// Two kinds of figures share a minute, so no server counts twice:
//   - a reading of the room's shared counters (queue.Stats), written once per
//     minute with HSETNX: whichever server reads first wins, and the others'
//     readings of the same minute are the same counters a moment later;
//   - what each server alone sees (waits of the visitors it admitted,
//     challenges it issued and saw solved, intents it took, minutes it was
//     degraded), added with HINCRBY by the server that saw it.
//
// Layout: one hash per room and UTC day, {prefix}{room}:history:YYYYMMDD,
// fields "HHMM" (the reading) and "HHMM:<figure>" (the additions). Each day
// expires Keep after its end (30 days by default).
package history

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

// DefaultKeep is how long a day of history is kept after it ends.
const DefaultKeep = 30 * 24 * time.Hour

// maxPending bounds the additions one server holds while Redis is down.
const maxPending = 50_000

// Reading is a room's shared counters at a minute's first sample.
type Reading struct {
	Waiting, Scheduled, Active                       int64
	Entered, Admitted, Abandoned, Expired, Completed int64
	NoShows, Idle                                    int64
}

func (r Reading) encode() string {
	v := []int64{r.Waiting, r.Scheduled, r.Active, r.Entered, r.Admitted, r.Abandoned, r.Expired, r.Completed, r.NoShows, r.Idle}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, " ")
}

func decodeReading(s string) (Reading, error) {
	f := strings.Fields(s)
	var v [10]int64
	if len(f) > len(v) {
		return Reading{}, fmt.Errorf("history: reading %q: %d figures", s, len(f))
	}
	for i, x := range f { // a shorter, older reading leaves the rest zero
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return Reading{}, fmt.Errorf("history: reading %q: %w", s, err)
		}
		v[i] = n
	}
	return Reading{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]}, nil
}

// Figure names an addition of one server.
type Figure string

// The figures servers add up.
const (
	ChallengesIssued Figure = "ci"
	ChallengesSolved Figure = "cs"
	Intents          Figure = "in"
	// DegradedSeconds is how long a server answered in degraded mode in
	// that minute; the report counts a minute degraded when any did.
	DegradedSeconds Figure = "dg"
)

// Store reads and writes rooms' history.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	keep   time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	pending map[pendingKey]int64
	dropped int64
}

type pendingKey struct {
	room  string
	at    time.Time // the minute
	field string    // after "HHMM:"
}

// New keeps history under prefix (vocab.KeyPrefix) for keep after each day
// ends (DefaultKeep when keep ≤ 0).
func New(rdb redis.UniversalClient, prefix string, keep time.Duration, log *slog.Logger) *Store {
	if keep <= 0 {
		keep = DefaultKeep
	}
	if log == nil {
		log = slog.Default()
	}
	return &Store{rdb: rdb, prefix: prefix, keep: keep, log: log, pending: map[pendingKey]int64{}}
}

// Keep is how long a day of history is kept after it ends.
func (s *Store) Keep() time.Duration { return s.keep }

func (s *Store) key(room string, day time.Time) string {
	return s.prefix + "{" + room + "}:history:" + day.UTC().Format("20060102")
}

func minuteField(at time.Time) string { return at.UTC().Format("1504") }

// expireAt is when the day holding at is dropped.
func (s *Store) expireAt(at time.Time) time.Time {
	y, m, d := at.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Add(s.keep)
}

// Record writes room's reading for the minute holding at, unless a server
// wrote that minute already; written says whether this one did.
func (s *Store) Record(ctx context.Context, room string, at time.Time, r Reading) (written bool, err error) {
	at = at.UTC().Truncate(time.Minute)
	key := s.key(room, at)
	var set *redis.BoolCmd
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		set = p.HSetNX(ctx, key, minuteField(at), r.encode())
		p.ExpireAt(ctx, key, s.expireAt(at))
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("history: record %s: %w", room, err)
	}
	return set.Val(), nil
}

// Add counts n of a figure for room in the minute holding at; Flush sends
// it. While Redis is down additions wait, up to a bound.
func (s *Store) Add(room string, at time.Time, f Figure, n int64) {
	s.add(pendingKey{room, at.UTC().Truncate(time.Minute), string(f)}, n)
}

// ObserveWaits counts how long visitors admitted at at waited, in buckets
// of about 9 % (waitBucket), so any range's quantiles can be read later.
func (s *Store) ObserveWaits(room string, at time.Time, waits ...time.Duration) {
	at = at.UTC().Truncate(time.Minute)
	for _, w := range waits {
		s.add(pendingKey{room, at, "w" + strconv.Itoa(waitBucket(w))}, 1)
	}
}

func (s *Store) add(k pendingKey, n int64) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[k]; !ok && len(s.pending) >= maxPending {
		s.dropped += n
		return
	}
	s.pending[k] += n
}

// Flush sends the additions counted since the last Flush; on failure they
// are kept for the next.
func (s *Store) Flush(ctx context.Context) error {
	s.mu.Lock()
	batch := s.pending
	s.pending = map[pendingKey]int64{}
	dropped := s.dropped
	s.dropped = 0
	s.mu.Unlock()
	if dropped > 0 {
		s.log.Warn("history: additions dropped while Redis was down", "count", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, n := range batch {
			key := s.key(k.room, k.at)
			p.HIncrBy(ctx, key, minuteField(k.at)+":"+k.field, n)
			p.ExpireAt(ctx, key, s.expireAt(k.at))
		}
		return nil
	})
	if err != nil {
		// Put them back: a pipeline may have half-applied, but a lost
		// connection mostly applies none, and over-counting a few on a
		// rare partial failure beats losing a minute's figures.
		s.mu.Lock()
		for k, n := range batch {
			s.pending[k] += n
		}
		s.mu.Unlock()
		return fmt.Errorf("history: flush: %w", err)
	}
	return nil
}

// Minute is what history holds of one minute of a room.
type Minute struct {
	At      time.Time // the minute's start, UTC
	Reading *Reading  // nil: no server read the room that minute
	Added   map[Figure]int64
	Waits   map[int]int64 // waitBucket → visitors
}

// Range returns room's minutes in [from, to), oldest first, those with
// nothing recorded left out.
func (s *Store) Range(ctx context.Context, room string, from, to time.Time) ([]Minute, error) {
	from, to = from.UTC(), to.UTC()
	if !to.After(from) {
		return nil, nil
	}
	var days []*redis.MapStringStringCmd
	var dayStarts []time.Time
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		y, m, d := from.Date()
		for day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); day.Before(to); day = day.AddDate(0, 0, 1) {
			days = append(days, p.HGetAll(ctx, s.key(room, day)))
			dayStarts = append(dayStarts, day)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("history: range %s: %w", room, err)
	}
	var out []Minute
	for i, cmd := range days {
		byMinute := map[string]*Minute{}
		for field, val := range cmd.Val() {
			hhmm, rest, _ := strings.Cut(field, ":")
			at, err := time.Parse("1504", hhmm)
			if err != nil {
				continue
			}
			at = dayStarts[i].Add(time.Duration(at.Hour())*time.Hour + time.Duration(at.Minute())*time.Minute)
			if at.Before(from) || !at.Before(to) {
				continue
			}
			mn := byMinute[hhmm]
			if mn == nil {
				mn = &Minute{At: at}
				byMinute[hhmm] = mn
			}
			if rest == "" {
				r, err := decodeReading(val)
				if err != nil {
					return nil, err
				}
				mn.Reading = &r
				continue
			}
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("history: %s %s: %w", room, field, err)
			}
			if b, ok := strings.CutPrefix(rest, "w"); ok {
				bi, err := strconv.Atoi(b)
				if err != nil {
					continue
				}
				if mn.Waits == nil {
					mn.Waits = map[int]int64{}
				}
				mn.Waits[bi] += n
				continue
			}
			if mn.Added == nil {
				mn.Added = map[Figure]int64{}
			}
			mn.Added[Figure(rest)] += n
		}
		start := len(out)
		for _, mn := range byMinute {
			out = append(out, *mn)
		}
		day := out[start:]
		sortMinutes(day)
	}
	return out, nil
}

// Since returns the first minute with history of room, searching back over
// the days kept before now; ok is false when there is none.
func (s *Store) Since(ctx context.Context, room string, now time.Time) (time.Time, bool, error) {
	now = now.UTC()
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	ndays := int(s.keep/(24*time.Hour)) + 1
	var cmds []*redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := ndays; i >= 0; i-- {
			cmds = append(cmds, p.Exists(ctx, s.key(room, today.AddDate(0, 0, -i))))
		}
		return nil
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("history: since %s: %w", room, err)
	}
	for i, c := range cmds {
		if c.Val() == 0 {
			continue
		}
		day := today.AddDate(0, 0, -(ndays - i))
		mins, err := s.Range(ctx, room, day, day.AddDate(0, 0, 1))
		if err != nil {
			return time.Time{}, false, err
		}
		if len(mins) > 0 {
			return mins[0].At, true, nil
		}
	}
	return time.Time{}, false, nil
}

// waitBucket is a wait's bucket: bucket b holds waits of s seconds with
// 8·log2(1+s) in [b, b+1), each about 9 % wider than the last.
func waitBucket(w time.Duration) int {
	return int(math.Floor(8 * math.Log2(1+max(w.Seconds(), 0))))
}

// bucketSeconds is the upper bound of bucket b, in seconds: a quantile read
// from buckets errs high by under 9 %.
func bucketSeconds(b int) float64 { return math.Exp2(float64(b+1)/8) - 1 }

// FromStats is a room's counters as the history keeps them.
func FromStats(st queue.Stats) Reading {
	return Reading{
		Waiting: st.Waiting, Scheduled: st.Scheduled, Active: st.Active,
		Entered: st.EnteredTotal, Admitted: st.AdmittedTotal, Abandoned: st.AbandonedTotal,
		Expired: st.ExpiredTotal, Completed: st.CompletedTotal, NoShows: st.NoShowTotal, Idle: st.IdleTotal,
	}
}
