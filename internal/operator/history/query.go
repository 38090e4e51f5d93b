package history

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// Window reads a report's range from its from and to (RFC 3339; either
// may be empty): by default the whole history kept, from the room's first
// minute to the end of the current one. A bad value is a queue.FieldError
// naming it.
func (s *Store) Window(ctx context.Context, room, fromS, toS string, now time.Time) (from, to time.Time, err error) {
	now = now.UTC()
	to = now.Truncate(time.Minute).Add(time.Minute)
	if toS != "" {
		if to, err = time.Parse(time.RFC3339, toS); err != nil {
			return from, to, &queue.FieldError{Field: "to", Message: "use RFC 3339, e.g. 2026-12-01T10:00:00+09:00"}
		}
	}
	// Nothing older than the days kept: it would only cost reads of
	// expired days.
	oldest := now.Add(-s.keep - 24*time.Hour).Truncate(time.Minute)
	if fromS != "" {
		if from, err = time.Parse(time.RFC3339, fromS); err != nil {
			return from, to, &queue.FieldError{Field: "from", Message: "use RFC 3339, e.g. 2026-12-01T10:00:00+09:00"}
		}
	} else {
		first, ok, err := s.Since(ctx, room, now)
		if err != nil {
			return from, to, err
		}
		from = oldest
		if ok {
			from = first
		}
	}
	if from.Before(oldest) {
		from = oldest
	}
	if !to.After(from) {
		return from, to, &queue.FieldError{Field: "to", Message: "must be after from"}
	}
	return from.UTC(), to.UTC(), nil
}

// Load builds room's report over [from, to); live reads the room's
// counters now, for the last minute's counts when the range reaches now.
func (s *Store) Load(ctx context.Context, room string, from, to, now time.Time, live func(context.Context) (Reading, error)) (Report, error) {
	mins, err := s.Range(ctx, room, from, to)
	if err != nil {
		return Report{}, err
	}
	var cur *Reading
	if live != nil && to.After(now.Truncate(time.Minute)) {
		r, err := live(ctx)
		if err != nil {
			return Report{}, err
		}
		cur = &r
	}
	return Build(room, from, to, mins, cur), nil
}
