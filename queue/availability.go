package queue

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
)

// Thresholds of the availability flag: a few failures in a row switch to
// degraded fast; more successes in a row are needed to switch back, so a
// flapping Redis does not flap the shop.
const (
	failuresToDegrade  = 2
	successesToRecover = 4
	pingInterval       = 500 * time.Millisecond
	pingTimeout        = 400 * time.Millisecond
)

// Availability is this server's one flag for "Redis can be used". It is fed
// by the outcome of every Redis call (through a client hook) and by a
// background ping; hot paths only read it.
type Availability struct {
	clock clockwork.Clock
	log   *slog.Logger

	degraded atomic.Bool

	mu        sync.Mutex
	redisUp   bool
	failures  int
	successes int
	drill     bool // an operator's drill forces degraded mode; false is automatic
	reason    string
	since     time.Time
	onChange  []func(degraded bool)
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
	return &Availability{clock: clock, log: log, redisUp: true, reason: "redis answers", since: clock.Now()}
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

// Record counts one Redis call's outcome. Only errors that mean Redis cannot
// be reached count as failures; a script's own error or a missing key is an
// answer, so it counts as success.
func (a *Availability) Record(err error) { a.record(err, false) }

// RecordProbe counts one probe's outcome (Run calls it every 500 ms).
func (a *Availability) RecordProbe(err error) { a.record(err, true) }

// record counts one outcome. Any call's failure counts towards degraded
// mode and any call's answer breaks a run of failures, but only probes count
// towards recovery: they come every 500 ms, so "four answers in a row" means
// two seconds of steady answers, not four calls in a burst of traffic.
func (a *Availability) record(err error, probe bool) {
	a.mu.Lock()
	if err != nil && Unreachable(err) {
		a.successes = 0
		a.failures++
		if a.redisUp && a.failures >= failuresToDegrade {
			a.redisUp = false
			a.log.Warn("redis unreachable: switching to degraded mode", "err", err)
			a.reason = "redis unreachable: " + err.Error()
		}
	} else {
		a.failures = 0
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

// Force sets a drill: true forces degraded mode; false or nil ends the
// drill and returns to automatic. Normal mode cannot be forced: it would
// hide a real outage behind 503s (every call waiting out its timeout)
// instead of carrying the sale in degraded mode.
func (a *Availability) Force(on *bool) {
	a.mu.Lock()
	a.drill = on != nil && *on
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
		pctx, cancel := context.WithTimeout(context.WithValue(ctx, probeKey{}, true), pingTimeout)
		drill, err := probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			a.setDrill(drill)
		}
		a.RecordProbe(err)
	}
}

// setDrill adopts the deployment's drill setting when it differs.
func (a *Availability) setDrill(on *bool) {
	a.mu.Lock()
	same := a.drill == (on != nil && *on)
	a.mu.Unlock()
	if !same {
		a.Force(on)
	}
}

// Hook returns a go-redis hook that records every command's outcome.
func (a *Availability) Hook() redis.Hook { return availabilityHook{a} }

type availabilityHook struct{ a *Availability }

func (h availabilityHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// probeKey marks the probe's calls: Run records them itself, once.
type probeKey struct{}

func counted(ctx context.Context) bool {
	return ctx.Value(probeKey{}) == nil && !errors.Is(ctx.Err(), context.Canceled)
}

func (h availabilityHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if counted(ctx) {
			h.a.Record(err)
		}
		return err
	}
}

func (h availabilityHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if counted(ctx) {
			h.a.Record(err)
		}
		return err
	}
}

// Unreachable reports whether err means Redis cannot be used: it could not
// be reached, or it refuses writes because it reached maxmemory (with
// noeviction), as opposed to Redis answering with an error. Either way the
// caller gets 503 with Retry-After and the failure counts towards degraded mode.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	if OutOfMemory(err) {
		return true
	}
	// Redis answering that it cannot serve yet (replaying its AOF, a
	// replica without its master, a cluster re-sharding) is not an answer.
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"} {
		if strings.HasPrefix(err.Error(), p+" ") {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// OutOfMemory reports whether Redis refused a write for memory ("OOM command
// not allowed when used memory > 'maxmemory'"), also from inside a script.
func OutOfMemory(err error) bool {
	return err != nil && strings.Contains(err.Error(), "OOM command not allowed")
}

// FailFast tunes a client so that calls fail within about a second when Redis
// is gone, instead of retrying with backoff: the availability flag then
// switches to degraded mode before visitors give up. Timeouts stay well above
// Redis's normal sub-millisecond answers.
// It takes UniversalOptions, which serve a single server as well as
// Sentinel and Cluster.
func FailFast(o *redis.UniversalOptions) *redis.UniversalOptions {
	o.MaxRetries = 1
	o.DialTimeout = 250 * time.Millisecond
	o.ReadTimeout = 500 * time.Millisecond
	o.WriteTimeout = 500 * time.Millisecond
	o.PoolTimeout = 500 * time.Millisecond
	return o
}
