package adaptive

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// Run polls rooms until ctx ends; every server runs it.
func (c *Controller) Run(ctx context.Context) error {
	failing := false
	for {
		err := c.step(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			c.log.Warn("adaptive: cannot read rooms or their activation; keeping the last states", "err", err)
			failing = true
		case err == nil && failing:
			c.log.Info("adaptive: reading rooms and activation again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.clock.After(c.poll):
		}
	}
}

// step reads every adaptive room's state, evaluates the rooms whose window
// this server claimed (in parallel: one slow signal must not hold up the
// others more than its timeout), then replaces the memory at once. A room
// whose settings or state cannot be read keeps its last state.
func (c *Controller) step(ctx context.Context) error {
	rooms, err := c.rooms.ListRooms(ctx)
	if err != nil {
		return err
	}
	old := *c.mem.Load()
	next := make(map[string]State, len(old))
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	put := func(room string, st State) {
		mu.Lock()
		next[room] = st
		mu.Unlock()
	}
	keep := func(room string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if st, ok := old[room]; ok {
			next[room] = st
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	// Redis keeps ms: memory holds the same instant other servers read.
	now := c.clock.Now().UTC().Truncate(time.Millisecond)
	for _, room := range rooms {
		s, err := c.rooms.GetRoom(ctx, room)
		if errors.Is(err, queue.ErrRoomNotFound) {
			continue
		}
		if err != nil {
			keep(room, err)
			continue
		}
		if s.Activation != queue.ActivationAdaptive || s.Adaptive == nil {
			continue
		}
		st, claimed, err := c.states.claim(ctx, room, now, claimGap(windowOf(*s.Adaptive)))
		if err != nil {
			keep(room, err)
			continue
		}
		if !claimed {
			put(room, st)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			put(room, c.evaluate(ctx, room, s, st, now))
		}()
	}
	wg.Wait()
	c.mem.Store(&next)
	return firstErr
}

// windowOf is the room's evaluation window; settings are validated, but a
// zero must never mean "evaluate on every poll".
func windowOf(a queue.Adaptive) time.Duration {
	if a.WindowS < 1 {
		return 60 * time.Second
	}
	return time.Duration(a.WindowS) * time.Second
}

// claimGap is how old the last evaluation must be for a new one: a window,
// less a little so that the server polling on the window's edge is not
// pushed a whole poll later by a few ms of clock skew.
func claimGap(window time.Duration) time.Duration {
	return window - min(window/10, 250*time.Millisecond)
}

// evaluate reads the signal for the window claimed at now, stores the
// outcome and returns it; on a lost claim or a failed write the state read
// before stands (the next poll reads whatever is stored).
func (c *Controller) evaluate(ctx context.Context, room string, s queue.Settings, prev State, now time.Time) State {
	rctx, cancel := context.WithTimeout(ctx, min(c.readTimeout, windowOf(*s.Adaptive)*8/10))
	reading, readErr := c.signal.Read(rctx, room, s)
	cancel()
	if ctx.Err() != nil {
		return prev
	}
	next, changed := decide(prev, *s.Adaptive, reading, readErr, now)
	next.EvaluatedAt = now
	ok, err := c.states.write(ctx, room, now, next)
	if err != nil || !ok {
		if err != nil {
			c.log.Warn("adaptive: store activation", "room", room, "err", err)
		}
		return prev
	}
	c.report(room, *s.Adaptive, prev, next, changed)
	return next
}

// report logs state changes only: a transition, the signal failing, the
// signal back. The evaluating server reports, so each is said once.
func (c *Controller) report(room string, a queue.Adaptive, prev, next State, changed bool) {
	switch {
	case next.SignalError != "" && prev.SignalError == "":
		c.log.Warn("adaptive: signal unavailable; the line keeps its state", "room", room,
			"signal", a.Signal, "open", next.Open, "err", next.SignalError)
	case next.SignalError == "" && prev.SignalError != "":
		c.log.Info("adaptive: signal readable again", "room", room, "signal", a.Signal, "reading", *next.Reading)
	}
	if !changed {
		return
	}
	msg, threshold, value := "adaptive: line closed", "close_at", a.CloseAt
	if next.Open {
		msg, threshold, value = "adaptive: line opened", "open_at", a.OpenAt
	}
	c.log.Info(msg, "room", room, "signal", a.Signal, "reading", *next.Reading, threshold, value, "reason", next.Reason)
	if c.onTransition != nil {
		c.onTransition(Transition{Room: room, Open: next.Open, Reading: *next.Reading, Reason: next.Reason, At: next.Since})
	}
}
