package queue

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// Thresholds of the availability flag. Degraded mode starts when store calls
// have failed for DefaultDegradeAfter with no answer in between, or at once on
// two certain failures in a row (ErrStoreDown: the connection refused, out of
// memory): a server starved of CPU sees its calls time out on a Redis that
// answers, and must not turn the line off for a stall. More answers in a row
// are needed to switch back, so a flapping Redis does not flap the shop.
const (
	DefaultDegradeAfter = time.Second
	downToDegrade       = 2
	successesToRecover  = 4
	pingInterval        = 500 * time.Millisecond
	pingTimeout         = 400 * time.Millisecond
)

// Bounds of SetDegradeAfter: below a probe interval a stall switches; above a
// minute visitors give up first.
const (
	MinDegradeAfter = 100 * time.Millisecond
	MaxDegradeAfter = time.Minute
)

// Availability is this server's one flag for "Redis can be used". It is fed
// by the outcome of every Redis call (through a client hook) and by a
// background ping; hot paths only read it.
type Availability struct {
	clock clockwork.Clock
	log   *slog.Logger

	degraded atomic.Bool

	mu        sync.Mutex
	after     time.Duration // how long failures must last (DefaultDegradeAfter)
	redisUp   bool
	failures  int       // failures since the last answer
	down      int       // certain ones among them (ErrStoreDown)
	firstFail time.Time // when the first of them was recorded
	successes int
	drill     bool // an operator's drill forces degraded mode; false is automatic
	// forced counts Force calls: a probe's reading of the deployment's
	// drill, taken before the latest Force, is older than it and dropped.
	forced   uint64
	reason   string
	since    time.Time
	onChange []func(degraded bool)
	settled  chan struct{} // closed at the next answer or switch (Settled)
}

// AvailabilityState is what GET /admin/api/degrade shows.
type AvailabilityState struct {
	Degraded bool      `json:"degraded"`
	Forced   *bool     `json:"forced"` // true during a drill, null otherwise (automatic)
	RedisUp  bool      `json:"redis_up"`
	Reason   string    `json:"reason"`
	Since    time.Time `json:"since"`
}

// NewAvailability starts with Redis assumed up.
func NewAvailability(clock clockwork.Clock, log *slog.Logger) *Availability {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Availability{clock: clock, log: log, after: DefaultDegradeAfter, redisUp: true, reason: "redis answers", since: clock.Now()}
}

// SetDegradeAfter sets how long store calls must keep failing, with no answer
// in between, before degraded mode starts; d is clamped to
// [MinDegradeAfter, MaxDegradeAfter] (the config checks it first). It returns a.
func (a *Availability) SetDegradeAfter(d time.Duration) *Availability {
	a.mu.Lock()
	a.after = min(max(d, MinDegradeAfter), MaxDegradeAfter)
	a.mu.Unlock()
	return a
}

// Degraded is the hot-path read.
func (a *Availability) Degraded() bool { return a.degraded.Load() }

// OnChange registers fn to hear every switch (after it happened).
func (a *Availability) OnChange(fn func(degraded bool)) {
	a.mu.Lock()
	a.onChange = append(a.onChange, fn)
	a.mu.Unlock()
}

// State reports the flag and why.
func (a *Availability) State() AvailabilityState {
	a.mu.Lock()
	defer a.mu.Unlock()
	var forced *bool // a copy: the caller reads it after the lock is gone
	if a.drill {
		on := true
		forced = &on
	}
	return AvailabilityState{Degraded: a.degraded.Load(), Forced: forced, RedisUp: a.redisUp, Reason: a.reason, Since: a.since}
}

// Record counts one store call's outcome. Only errors that mean the store
// cannot be used (ErrUnavailable, as the adapter translates them) count as
// failures; a script's own error or a missing key is an answer, so it counts
// as success.
func (a *Availability) Record(err error) { a.record(err, false) }

// RecordProbe counts one probe's outcome (Run calls it every 500 ms).
func (a *Availability) RecordProbe(err error) { a.record(err, true) }

// record counts one outcome. Any call's failure counts towards degraded
// mode and any call's answer breaks a run of failures, but only probes count
// towards recovery: they come every 500 ms, so "four answers in a row" means
// two seconds of steady answers, not four calls in a burst of traffic.
// A run of failures switches once it spans a.after (the probe alone fails
// every 500 ms while Redis hangs), or on its second certain failure.
func (a *Availability) record(err error, probe bool) {
	if errors.Is(err, ErrBusy) {
		return // this server is busy, the store is not gone: neither a failure nor an answer
	}
	a.mu.Lock()
	if err != nil && errors.Is(err, ErrUnavailable) {
		now := a.clock.Now()
		a.successes = 0
		if a.failures == 0 {
			a.firstFail = now
		}
		a.failures++
		if errors.Is(err, ErrStoreDown) {
			a.down++
		}
		lasted := now.Sub(a.firstFail)
		if a.redisUp && (a.down >= downToDegrade || (a.failures > 1 && lasted >= a.after)) {
			a.redisUp = false
			a.log.Warn("redis unreachable: switching to degraded mode", "err", err,
				"failures", a.failures, "certain", a.down, "for", lasted)
			a.reason = "redis unreachable: " + err.Error()
		}
	} else {
		a.failures, a.down = 0, 0
		a.wakeLocked()
		if probe {
			a.successes++
		}
		if !a.redisUp && a.successes >= successesToRecover {
			a.redisUp = true
			a.log.Info("redis answers again: leaving degraded mode")
			a.reason = "redis answers"
		}
	}
	a.apply()
}

// Settled returns a channel closed at the store's next answer or the
// flag's next switch, whichever comes first: a request whose store call
// failed in a stall waits on it to run again (server.rideStall).
func (a *Availability) Settled() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.settled == nil {
		a.settled = make(chan struct{})
	}
	return a.settled
}

// DegradeAfter is how long failures must last before degraded mode.
func (a *Availability) DegradeAfter() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.after
}

// wakeLocked closes the Settled channel, if anyone asked for one; a.mu is held.
func (a *Availability) wakeLocked() {
	if a.settled != nil {
		close(a.settled)
		a.settled = nil
	}
}

// Force sets a drill: true forces degraded mode; false or nil ends the
// drill and returns to automatic. Normal mode cannot be forced: it would
// hide a real outage behind 503s (every call waiting out its timeout)
// instead of carrying the sale in degraded mode.
func (a *Availability) Force(on *bool) {
	a.mu.Lock()
	a.force(on)
}

// force is Force with a.mu held; it releases it.
func (a *Availability) force(on *bool) {
	a.drill = on != nil && *on
	a.forced++
	if a.drill {
		a.log.Warn("degraded mode forced on by an operator (drill)")
	} else {
		a.log.Info("degraded mode: automatic")
	}
	a.apply()
}

// apply recomputes the flag and tells listeners on a switch; a.mu is held
// and released here.
func (a *Availability) apply() {
	want := !a.redisUp
	switch {
	case a.drill:
		want, a.reason = true, "forced by an operator (drill)"
	case a.redisUp:
		a.reason = "redis answers"
	case !strings.HasPrefix(a.reason, "redis unreachable"):
		a.reason = "redis unreachable"
	}
	changed := a.degraded.Load() != want
	var fns []func(bool)
	if changed {
		a.wakeLocked()
		a.degraded.Store(want)
		a.since = a.clock.Now()
		fns = append(fns, a.onChange...)
	}
	a.mu.Unlock()
	for _, fn := range fns {
		fn(want)
	}
}

// Probe asks Redis whether it answers, and for the deployment's drill
// setting (nil or false: automatic), so a drill started on one server
// reaches all.
type Probe func(ctx context.Context) (drill *bool, err error)

// Run probes every 500 ms until ctx ends, so an idle server notices too.
func (a *Availability) Run(ctx context.Context, probe Probe) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.clock.After(pingInterval):
		}
		a.mu.Lock()
		forced := a.forced
		a.mu.Unlock()
		pctx, cancel := context.WithTimeout(context.WithValue(ctx, probeKey{}, true), pingTimeout)
		drill, err := probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			a.setDrill(drill, forced)
		}
		a.RecordProbe(err)
	}
}

// setDrill adopts the deployment's drill setting, read by a probe that
// began after the forced-th Force, when it differs. A drill started or
// ended here while the probe was on its way (the admin API forces this
// server first, then tells Redis) is newer than what the probe read: it
// stands until the next probe, which reads the drill as the API left it.
func (a *Availability) setDrill(on *bool, forced uint64) {
	a.mu.Lock()
	if a.drill == (on != nil && *on) || a.forced != forced {
		a.mu.Unlock()
		return
	}
	a.force(on)
}

// probeKey marks the probe's calls: Run records them itself, once.
type probeKey struct{}

// Counted reports whether a store call made with ctx should be recorded by
// the store's hook: not the probe's own calls (Run records those once), nor
// calls whose caller went away.
func Counted(ctx context.Context) bool {
	return ctx.Value(probeKey{}) == nil && !errors.Is(ctx.Err(), context.Canceled)
}
