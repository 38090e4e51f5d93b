package queue

import (
	"context"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// WaitersHooks connect Waiters to the push hub.
type WaitersHooks struct {
	// Open lists, by room, the tickets with a connection open on this
	// server (push.Hub.Open); nil: none.
	Open func() map[string][]string
	// Admitted and RoomChanged are told after the view took an admission
	// heard or a room's change (push.Hub.Notify, NotifyRoom); nil: nobody.
	Admitted    func(room string, ids []string)
	RoomChanged func(room string)
}

// Run follows the change logs, hears admissions and room changes from
// every server (the view first, then the hooks), writes the waiters' sign
// of life every PresentEvery and drops tickets nobody asks about, until
// ctx ends.
func (w *Waiters) Run(ctx context.Context, h WaitersHooks) error {
	w.open = h.Open
	g, ctx := errgroup.WithContext(ctx)
	if w.run != nil {
		g.Go(func() error { return w.run(ctx) })
	}
	if w.listen != nil {
		g.Go(func() error {
			return w.listen(ctx, func(room string, adm []Admitted) {
				// An admission's event tells the tickets' times: a ticket
				// known here is shown admitted without a read.
				w.admitted(room, adm)
				if h.Admitted != nil {
					h.Admitted(room, AdmittedIDs(adm))
				}
			}, func(room string) {
				// A room change may change every ticket's state: their
				// next update reads the store.
				w.forgetRoom(room)
				if h.RoomChanged != nil {
					h.RoomChanged(room)
				}
			})
		})
	}
	g.Go(func() error {
		t := time.NewTicker(w.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				w.flush(ctx, time.Now())
			}
		}
	})
	return g.Wait()
}

// polledNow counts a poll of a waiting ticket as its sign of life: it is
// in the room's next snapshot.
func (w *Waiters) polledNow(room, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.polled[room]
	if m == nil {
		m = map[string]struct{}{}
		w.polled[room] = m
	}
	m[id] = struct{}{}
}

func (w *Waiters) flush(ctx context.Context, now time.Time) {
	var open map[string][]string
	if w.open != nil {
		open = w.open()
	}
	if open == nil {
		open = map[string][]string{}
	}
	w.mu.Lock()
	// A room's change is kept for one to two flush intervals: longer than
	// a store read takes (its timeouts are far shorter).
	for room, g := range w.roomStale {
		if g <= w.flushed {
			delete(w.roomStale, room)
		}
	}
	w.flushed = w.gen.Load()
	for room, m := range w.known {
		for id, k := range m {
			if now.Sub(k.used) > knownIdle {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			delete(w.known, room)
		}
	}
	// The polled since the last flush join the open connections.
	for room, ids := range w.polled {
		in := make(map[string]struct{}, len(open[room]))
		for _, id := range open[room] {
			in[id] = struct{}{}
		}
		for id := range ids {
			if _, ok := in[id]; !ok {
				open[room] = append(open[room], id)
			}
		}
	}
	w.polled = map[string]map[string]struct{}{}
	w.mu.Unlock()
	w.present(ctx, open)
}

// present writes each room's snapshot of the waiters with an open
// connection or a poll, after marking the tickets that were in the room's
// last snapshot and are not in this one (their connections closed or moved
// to another server, their polls stopped): so no waiter goes without a
// sign of life between the two. A room whose mark failed keeps its last
// snapshot, to be tried again.
func (w *Waiters) present(ctx context.Context, open map[string][]string) {
	for room := range w.shown {
		if _, ok := open[room]; !ok {
			open[room] = nil
		}
	}
	for room, ids := range open {
		cur := make(map[string]struct{}, len(ids))
		for _, id := range ids {
			cur[id] = struct{}{}
		}
		var gone []string
		for id := range w.shown[room] {
			if _, ok := cur[id]; !ok {
				gone = append(gone, id)
			}
		}
		if len(gone) > 0 {
			// In seq order (an id begins with its zero-padded seq): the
			// store writes each bucket of consecutive seqs once a call.
			slices.Sort(gone)
			if err := w.alive.Alive(ctx, room, gone); err != nil {
				if ctx.Err() == nil {
					w.log.Warn("queue: sign of life", "room", room, "tickets", len(gone), "err", err)
				}
				continue
			}
		}
		if err := w.alive.Present(ctx, room, w.server, ids); err != nil {
			if ctx.Err() == nil {
				w.log.Warn("queue: sign of life", "room", room, "tickets", len(ids), "err", err)
			}
			continue
		}
		if len(cur) == 0 {
			delete(w.shown, room)
		} else {
			w.shown[room] = cur
		}
	}
}
