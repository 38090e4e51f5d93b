package queue

import (
	"context"
	"errors"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// Status is identity's ticket as a status read or a poll asks for it. A
// waiting ticket known here is answered from the view, without a store
// read; the answer is its sign of life, written with the next snapshot
// (one per room and interval, not one per poll). Any other ticket is read
// from the store, and a waiting one is kept for the polls after it. When
// that read fails because the store is busy or slow (ErrBusy,
// ErrUnavailable), a waiting ticket known here is answered with its last
// known place, marked Stale: a read never fails for a busy pool.
func (w *Waiters) Status(ctx context.Context, room, id, identity string) (Ticket, Settings, error) {
	now := time.Now()
	if t, ok := w.local(room, id, identity, now); ok {
		s, err := w.line.Settings(ctx, room) // cached; the last known when the store fails
		if err != nil {
			return Ticket{}, Settings{}, err
		}
		if t.State == vocab.StateWaiting {
			w.pos.Watch(room)
			w.polledNow(room, id)
		}
		t.Show(&s)
		return t, s, nil
	}
	gen := w.gen.Load()
	t, s, err := w.line.Status(ctx, room, id, identity)
	if err != nil {
		if errors.Is(err, ErrBusy) || errors.Is(err, ErrUnavailable) {
			if st, ss, ok := w.stale(ctx, room, id, identity, now); ok {
				return st, ss, nil
			}
		}
		return t, s, err
	}
	if t.State == vocab.StateWaiting {
		w.pos.Watch(room)
		w.floor(room, &t)
	}
	w.remember(room, []Ticket{t}, gen, time.Now())
	return t, s, nil
}

// floor lowers a waiting ticket's position read from the store to the
// lowest this view told it: a place never goes back.
func (w *Waiters) floor(room string, t *Ticket) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k := w.known[room][t.ID]; k != nil && k.t.Identity == t.Identity && k.best > 0 && t.Position > k.best {
		t.Position = k.best
	}
}

// stale is a waiting ticket's last known state, for a read the store
// could not answer; false when nothing waiting is known of it for identity.
func (w *Waiters) stale(ctx context.Context, room, id, identity string, now time.Time) (Ticket, Settings, bool) {
	w.mu.Lock()
	k := w.known[room][id]
	if k == nil || k.t.State != vocab.StateWaiting || k.t.Identity != identity || k.best <= 0 {
		w.mu.Unlock()
		return Ticket{}, Settings{}, false
	}
	k.used = now
	t := k.t
	t.Position, t.Waiting, t.Stale = k.best, max(k.waiting, k.best), true
	w.mu.Unlock()
	s, err := w.line.Settings(ctx, room) // the cached settings while the store fails
	if err != nil {
		return Ticket{}, Settings{}, false
	}
	w.polledNow(room, id)
	t.Show(&s)
	return t, s, true
}

// Fetch is the push hub's update of room's tickets: each waiting one known
// here from the view, the others read from the store in one round trip
// (and kept).
func (w *Waiters) Fetch(ctx context.Context, room string, ids []string) ([]Ticket, Settings, error) {
	w.pos.Watch(room)
	now := time.Now()
	ts := make([]Ticket, len(ids))
	var read []int // indexes of ids to read from the store
	for i, id := range ids {
		t, ok := w.local(room, id, "", now)
		if !ok {
			read = append(read, i)
			continue
		}
		ts[i] = t
	}
	var s Settings
	if len(read) < len(ids) {
		var err error
		if s, err = w.line.Settings(ctx, room); err != nil {
			return nil, Settings{}, err
		}
		for i := range ts {
			ts[i].Show(&s)
		}
	}
	if len(read) == 0 {
		return ts, s, nil
	}
	gen := w.gen.Load()
	want := make([]string, len(read))
	for j, i := range read {
		want[j] = ids[i]
	}
	got, rs, err := w.line.StatusMany(ctx, room, want)
	if err != nil {
		return nil, Settings{}, err
	}
	for j, i := range read {
		ts[i] = got[j]
	}
	w.remember(room, got, gen, time.Now())
	return ts, rs, nil
}

// Connect is a push connection's first ticket for identity, and whether
// the view keeps it (current: the hub may take it as the ticket's update
// until its tier slot). A waiting ticket this server entered a moment ago
// is answered as its enter was, without a read.
func (w *Waiters) Connect(ctx context.Context, room, id, identity string) (t Ticket, s Settings, current bool, err error) {
	gen := w.gen.Load()
	if kept, ok := w.first(room, id, identity, time.Now()); ok {
		if s, err = w.line.Settings(ctx, room); err != nil {
			return Ticket{}, Settings{}, false, err
		}
		t = kept
		t.Show(&s)
	} else if t, s, err = w.line.Status(ctx, room, id, identity); err != nil {
		return t, s, false, err
	}
	return t, s, t.ID == id && w.remembered(room, t, gen, time.Now()), nil
}

// Leave gives up identity's ticket and drops it from the view (Left): the
// next read of it says it left.
func (w *Waiters) Leave(ctx context.Context, room, id, identity string) error {
	err := w.line.Leave(ctx, room, id, identity)
	if err == nil || errors.Is(err, ErrBusy) || errors.Is(err, ErrUnavailable) {
		w.Left(room, id) // the leave may have happened: read it next time
	}
	return err
}
