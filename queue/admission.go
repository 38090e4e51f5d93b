package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// roomListInterval is how often the admitter looks for new or deleted rooms.
const roomListInterval = time.Second

// Admitter runs one admission loop per room on this server. Every server runs
// it; a lease per room (Leases) lets one of them tick at a time, and the
// tick script's per-tick budget in Redis still holds whoever ticks, so a
// slot is never admitted twice.
type Admitter struct {
	line *Line
	// ID names this server to the others in the rooms' leases; NewAdmitter
	// makes a random one, waitroom sets it from --server-id.
	ID string
	// Degraded, when set, is the availability flag. While it is up the
	// admission loop lets nobody in and drops nobody: the line's pages are
	// on the accept page and cannot show a sign of life.
	Degraded func() bool

	mu           sync.Mutex
	epoch        string    // Redis's data epoch as last seen
	lastDegraded time.Time // when this server was last seen degraded
	wakes        map[string]chan struct{}
	// OnTick, when set, hears every tick's result (metrics, push).
	OnTick func(room string, s Settings, r TickResult)

	admitting atomic.Int64 // rooms whose lease this server holds
}

// NewAdmitter returns an admitter over line; the epoch last seen is the
// snapshot's, so a server restarted across a Redis data loss notices it.
func NewAdmitter(line *Line) *Admitter {
	return &Admitter{line: line, epoch: line.snapEpoch, ID: RandomID()}
}

// Run starts and stops room loops as rooms come and go, until ctx ends.
func (a *Admitter) Run(ctx context.Context) error {
	running := map[string]context.CancelFunc{}
	var loops sync.WaitGroup
	defer func() {
		for _, cancel := range running {
			cancel()
		}
		loops.Wait() // a stopped admitter leaves no loop behind, nor any timer
	}()
	// A settings change made on any server wakes the room's loop, so a new
	// pace applies within one tick of the new interval rather than after a
	// sleep of the old one.
	go func() {
		err := a.line.store.Listen(ctx, func(string, []Admitted) {}, a.wake)
		if err != nil && ctx.Err() == nil {
			a.line.log.Warn("admission: listen for settings changes", "err", err)
		}
	}()
	for {
		rooms, err := a.line.store.ListRooms(ctx)
		if err == nil {
			// The epoch is read after the list: a room missing from it is
			// deleted only if Redis kept its data meanwhile; a Redis that
			// came back empty gets its rooms back instead of losing them here.
			restored, known := a.checkEpoch(ctx)
			if restored {
				continue
			}
			seen := make(map[string]bool, len(rooms))
			for _, room := range rooms {
				seen[room] = true
				// A room's loop starts once the epoch is known: a loop that
				// cached a room before this server had read any epoch could
				// not tell a Redis that lost the room from one it never knew.
				if _, ok := running[room]; !ok && known {
					rctx, cancel := context.WithCancel(ctx)
					running[room] = cancel
					wake := a.wakeup(room)
					loops.Go(func() { a.runRoom(rctx, room, wake) })
				}
			}
			for room, cancel := range running {
				if !seen[room] && known {
					cancel()
					delete(running, room)
					a.line.forget(room)
					a.mu.Lock()
					delete(a.wakes, room)
					a.mu.Unlock()
				}
			}
		} else if ctx.Err() == nil {
			a.line.log.Warn("admission: list rooms", "err", err)
		}
		t := a.line.clock.NewTimer(roomListInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.Chan():
		}
	}
}

// wakeup returns the channel that wakes room's loop, made once per room.
func (a *Admitter) wakeup(room string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.wakes == nil {
		a.wakes = map[string]chan struct{}{}
	}
	ch, ok := a.wakes[room]
	if !ok {
		ch = make(chan struct{}, 1)
		a.wakes[room] = ch
	}
	return ch
}

// wake tells room's loop that its settings changed; it never blocks.
func (a *Admitter) wake(room string) {
	a.mu.Lock()
	ch := a.wakes[room]
	a.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// runRoom runs one room's admission on this server. Every server runs it;
// only the holder of the room's lease ticks, the others retry when the
// lease would end. Settings are re-read every round, and a change wakes the
// loop at once; a tick earlier than an interval after the last admitting one
// keeps house but admits nobody, so the pace holds in every sliding window.
func (a *Admitter) runRoom(ctx context.Context, room string, wake <-chan struct{}) {
	failing := false
	held := false
	// admitted is the start of this server's last admitting tick until the
	// lease has recorded it.
	var admitted time.Time
	defer func() {
		if held {
			a.admitting.Add(-1)
		}
	}()
	for {
		next := 200 * time.Millisecond
		since := a.line.putsNow()
		s, err := a.line.store.GetRoom(ctx, room)
		switch {
		case errors.Is(err, ErrRoomNotFound):
			// Deleted (the list loop stops this loop within a second) or lost
			// with Redis's data (put back here, or by the list loop).
			if restored, _ := a.checkEpoch(ctx); restored {
				continue
			}
		case err != nil:
			if !failing && ctx.Err() == nil {
				a.line.log.Warn("admission: read room", "room", room, "err", err)
			}
			failing = true
			if held { // a server that cannot read Redis admits nobody: not counted as admitting
				held = false
				a.admitting.Add(-1)
			}
		default:
			now := a.line.clock.Now()
			a.line.remember(room, s, now, since)
			interval := time.Duration(s.BatchIntervalMS) * time.Millisecond
			next = interval
			ttl := LeaseTTL(interval)
			// Every server follows degraded mode, so the one that takes
			// over after an outage still drops nobody for abandon_after_s.
			eff := a.effective(s)
			l, err := a.line.store.Lease(ctx, room, a.ID, now, ttl, interval, admitted)
			if err != nil {
				if !failing && ctx.Err() == nil {
					a.line.log.Warn("admission: lease", "room", room, "err", err)
				}
				failing = true
				if held { // unrenewed, it ends: count it gone at once
					held = false
					a.admitting.Add(-1)
				}
				break
			}
			admitted = time.Time{}
			a.holding(room, &held, l)
			if !l.Held {
				next = max(l.Until.Sub(now), time.Millisecond) // the holder renews before then, or dies
				break
			}
			if !l.Due {
				eff.Paused = true
			}
			// The tick must not reach the store after the lease ended (a
			// pause here); a store that honours deadlines refuses it then.
			tctx, cancel := context.WithTimeout(ctx, l.Until.Sub(now))
			r, err := a.line.Tick(tctx, room, &eff)
			cancel()
			if err != nil {
				if !failing && ctx.Err() == nil {
					a.line.log.Warn("admission: tick", "room", room, "err", err)
				}
				failing = true
				break
			}
			if failing {
				a.line.log.Info("admission: ticking again", "room", room)
			}
			failing = false
			if len(r.Admitted) > 0 {
				// The next round's renewal records it. A holder taking over
				// meanwhile waits for this lease to end first, two intervals
				// after its renewal: past the interval the pace asks. A
				// lease shorter than that (a long interval, leaseMax) is
				// recorded at once; if this fails, the next round does.
				admitted = now
				if recordAtOnce(ttl, interval) {
					if _, err := a.line.store.Lease(ctx, room, a.ID, a.line.clock.Now(), ttl, interval, admitted); err == nil {
						admitted = time.Time{}
					}
				}
			}
			if a.OnTick != nil {
				a.OnTick(room, s, r)
			}
			if !l.Due {
				next = l.LastTick.Add(interval).Sub(now)
			}
			next = min(next, ttl/2) // renewed well before it ends
		}
		t := a.line.clock.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			t.Stop()
		case <-t.Chan():
		}
	}
}

// recordAtOnce: an admitting tick's start must go to the lease at once when
// a holder taking over could tick within an interval of it: when the lease
// is shorter than two intervals.
func recordAtOnce(ttl, interval time.Duration) bool { return ttl < 2*interval }

// holding keeps the count of rooms this server admits and logs changes of hands.
func (a *Admitter) holding(room string, held *bool, l Lease) {
	switch {
	case l.Held && !*held:
		a.admitting.Add(1)
		a.line.log.Info("admission: this server admits the room now", "room", room, "server", a.ID, "previous", l.Previous)
	case !l.Held && *held:
		a.admitting.Add(-1)
		a.line.log.Warn("admission: another server took over the room", "room", room, "server", a.ID, "holder", l.Holder)
	}
	*held = l.Held
}

// Admitting is how many rooms this server admits now (holds the lease of).
func (a *Admitter) Admitting() int { return int(a.admitting.Load()) }

// checkEpoch compares Redis's epoch with the one this server saw last. A
// Redis restarted without persistence comes back empty with a new epoch,
// and one restarted from an older snapshot is given a new epoch by the
// server that notices (Store.Epoch): then every room this server knows is
// put back where missing, and held where present, until every entry token
// issued before has expired (a room deleted by an operator leaves the epoch
// alone, so it stays deleted). It reports whether the epoch changed and the
// rooms were restored, and whether the epoch is known: read, and every
// room restored.
func (a *Admitter) checkEpoch(ctx context.Context) (restored, known bool) {
	e, err := a.line.store.Epoch(ctx)
	if err != nil {
		return false, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Rewound {
		// Logged once, by the server that noticed; the others see a new epoch.
		a.line.log.Error("admission: Redis went back in time: its data is older than this server saw (restarted from an older snapshot, or a replica behind promoted); treated as a data loss",
			"clock", e.Clock, "seen", e.Seen, "epoch", e.ID)
	}
	if a.epoch == "" || e.ID == a.epoch {
		a.epoch = e.ID
		a.line.sawEpoch(e.ID)
		return false, true
	}
	failed := false
	var put, held []string
	var holdFor time.Duration
	for room, s := range a.line.cachedRooms() {
		ok, err := a.line.store.RestoreRoom(ctx, room, s, a.line.clock.Now())
		if err != nil {
			failed = true
			a.line.log.Warn("admission: restore room", "room", room, "err", err)
			continue
		}
		if ok {
			put = append(put, room)
		} else {
			held = append(held, room)
		}
		holdFor = max(holdFor, time.Duration(s.JitterMS)*time.Millisecond+time.Duration(s.SessionTTLS)*time.Second)
	}
	if failed {
		// The new epoch stays unseen, so the next check tries again (a room
		// put back already is left as it is, its hold extended); unknown, so
		// no loop stops for a room the Redis does not list yet.
		return false, false
	}
	slices.Sort(put)
	slices.Sort(held)
	a.line.log.Warn("admission: Redis lost data (came back empty or older); rooms it lost are restored from this server's copy, and every room's capacity is held until entry tokens from before have expired",
		"restored", put, "held", held, "held_for", holdFor, "epoch", e.ID, "was", a.epoch)
	a.epoch = e.ID
	a.line.sawEpoch(e.ID)
	return true, true
}

// neverAbandon is an abandon_after_s that drops nobody.
const neverAbandon = int64(1) << 31

// effective is what a tick runs with: paused and dropping nobody while
// degraded, and dropping nobody for abandon_after_s after it, since waiters
// could not show a sign of life during the outage; their last sign counts
// from the recovery.
func (a *Admitter) effective(s Settings) Settings {
	if a.Degraded == nil {
		return s
	}
	now := a.line.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.Degraded() {
		a.lastDegraded = now
		s.Paused, s.AbandonAfterS = true, neverAbandon
		HoldLapses(&s)
		return s
	}
	if !a.lastDegraded.IsZero() && now.Sub(a.lastDegraded) < time.Duration(s.AbandonAfterS)*time.Second {
		s.AbandonAfterS = neverAbandon
	}
	// Admitted visitors passed the gate offline meanwhile, unseen: their
	// slots lapse only a full window after the recovery.
	if !a.lastDegraded.IsZero() && now.Sub(a.lastDegraded) < time.Duration(max(s.ArrivalWindowS, s.IdleAfterS))*time.Second {
		HoldLapses(&s)
	}
	return s
}
