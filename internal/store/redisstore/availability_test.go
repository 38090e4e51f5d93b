package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// errRefused is a certain outage as the store's adapter reports it: nothing
// listens at Redis's address.
var errRefused = fmt.Errorf("redisstore: call: %w: %w", queue.ErrStoreDown,
	&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})

// errTimeout is an uncertain one: Redis did not answer in time, which a
// server starved of CPU also sees.
var errTimeout = fmt.Errorf("redisstore: call: %w: %w", queue.ErrUnavailable,
	&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})

func TestAvailabilitySwitchesWithoutFlapping(t *testing.T) {
	a := queue.NewAvailability(clockwork.NewFakeClock(), nil)
	var switches atomic.Int32
	a.OnChange(func(bool) { switches.Add(1) })

	a.Record(errRefused)
	if a.Degraded() {
		t.Fatal("one failure switched to degraded")
	}
	a.Record(redis.Nil) // an answer, not an outage
	a.Record(errRefused)
	if a.Degraded() {
		t.Fatal("failures that are not consecutive switched to degraded")
	}
	a.Record(errRefused)
	if !a.Degraded() || a.State().RedisUp {
		t.Fatal("two failures in a row did not switch to degraded")
	}
	// A burst of answered calls is not steady: only probes (every 500 ms)
	// count towards recovery.
	for range 10 {
		a.Record(nil)
	}
	if !a.Degraded() {
		t.Fatal("recovered on a burst of calls")
	}
	// Recovery needs several probe answers in a row: one flicker is not enough.
	a.RecordProbe(nil)
	a.RecordProbe(nil)
	a.Record(errRefused)
	a.RecordProbe(nil)
	a.RecordProbe(nil)
	a.RecordProbe(nil)
	if !a.Degraded() {
		t.Fatal("recovered before four probe answers in a row")
	}
	a.RecordProbe(nil)
	if a.Degraded() {
		t.Fatal("four probe answers in a row did not recover")
	}
	if st := a.State(); st.Reason != "redis answers" {
		t.Fatalf("reason after recovery %q", st.Reason)
	}
	if got := switches.Load(); got != 2 {
		t.Fatalf("%d switches, want 2", got)
	}
	if redisstore.Unreachable(errors.New("ERR script error")) || !redisstore.Unreachable(errRefused) ||
		!redisstore.Unreachable(errors.New("LOADING Redis is loading the dataset in memory")) {
		t.Fatal("Unreachable misclassifies")
	}
	for _, err := range []error{errRefused, syscall.ECONNREFUSED, errors.New("LOADING Redis is loading the dataset in memory"),
		errors.New("OOM command not allowed when used memory > 'maxmemory'.")} {
		if !redisstore.Down(err) {
			t.Fatalf("Down(%v) = false, want true", err)
		}
	}
	for _, err := range []error{nil, redis.Nil, errTimeout, os.ErrDeadlineExceeded, syscall.ECONNRESET,
		errors.New("TRYAGAIN Multiple keys request during rehashing of slot"), errors.New("ERR script error")} {
		if redisstore.Down(err) {
			t.Fatalf("Down(%v) = true, want false", err)
		}
	}
}

// TestAvailabilityRidesOutAStall: calls that time out switch to degraded
// mode only once they have kept failing for the window (1 s by default)
// with no answer in between. A CPU-starved server sees a burst of timeouts
// from a Redis that answers; a hung Redis fails every probe (500 ms) and
// still switches, just later than a refused connection.
func TestAvailabilityRidesOutAStall(t *testing.T) {
	clock := clockwork.NewFakeClock()
	a := queue.NewAvailability(clock, nil)
	for range 50 { // a stall's burst: every call in flight timed out at once
		a.Record(errTimeout)
	}
	if a.Degraded() {
		t.Fatal("a burst of timeouts at one instant switched to degraded")
	}
	clock.Advance(900 * time.Millisecond)
	a.Record(errTimeout)
	if a.Degraded() {
		t.Fatal("timeouts over 0.9 s switched (window 1 s)")
	}
	a.Record(nil) // an answer ends the run
	clock.Advance(200 * time.Millisecond)
	a.Record(errTimeout)
	clock.Advance(999 * time.Millisecond)
	a.Record(errTimeout)
	if a.Degraded() {
		t.Fatal("the window did not restart after an answer")
	}
	clock.Advance(time.Millisecond)
	if a.Degraded() {
		t.Fatal("switched without a failure recorded")
	}
	a.Record(errTimeout)
	if !a.Degraded() || a.State().RedisUp {
		t.Fatalf("timeouts for 1 s with no answer did not switch: %+v", a.State())
	}

	// A longer window, as --degrade-after sets it; a lone certain failure
	// among timeouts does not switch, two do.
	a = queue.NewAvailability(clock, nil).SetDegradeAfter(3 * time.Second)
	a.Record(errTimeout)
	clock.Advance(2 * time.Second)
	a.Record(errRefused)
	a.Record(errTimeout)
	if a.Degraded() {
		t.Fatal("switched within a 3 s window on one refused connection")
	}
	clock.Advance(time.Second)
	a.Record(errTimeout)
	if !a.Degraded() {
		t.Fatal("timeouts for 3 s did not switch with a 3 s window")
	}
	a = queue.NewAvailability(clock, nil).SetDegradeAfter(3 * time.Second)
	a.Record(errRefused)
	a.Record(nil)
	a.Record(errRefused)
	if a.Degraded() {
		t.Fatal("refused connections that are not consecutive switched")
	}
	a.Record(errRefused)
	if !a.Degraded() {
		t.Fatal("two refused connections in a row did not switch at once")
	}

	// Out of bounds is clamped (the config refuses it first).
	a = queue.NewAvailability(clock, nil).SetDegradeAfter(0)
	a.Record(errTimeout)
	clock.Advance(queue.MinDegradeAfter - time.Millisecond)
	a.Record(errTimeout)
	if a.Degraded() {
		t.Fatal("a window of 0 was not clamped to the minimum")
	}
}

// TestRealOutagesAreClassified: against a real redis-server, a paused Redis
// (CLIENT PAUSE: it stops answering, as a hung or starved one does) gives
// timeouts that switch only once they last the window, while a killed one
// refuses connections, which switch after two calls without the clock
// moving at all.
func TestRealOutagesAreClassified(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	clock := clockwork.NewFakeClock()
	a := queue.NewAvailability(clock, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: 100 * time.Millisecond,
		WriteTimeout: 100 * time.Millisecond, MaxRetries: -1, DialerRetries: 1, PoolSize: 4})
	rdb.AddHook(redisstore.Hook(a))
	t.Cleanup(func() { _ = rdb.Close() })
	store := redisstore.New(rdb, redistest.Prefix(t))
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Client(t).Do(ctx, "CLIENT", "PAUSE", 1500, "ALL").Err(); err != nil {
		t.Skipf("this Redis cannot pause clients (%v)", err)
	}
	for range 3 {
		_, err := store.GetRoom(ctx, "paused")
		if !errors.Is(err, queue.ErrUnavailable) || errors.Is(err, queue.ErrStoreDown) {
			t.Fatalf("a call to a paused Redis: %v, want ErrUnavailable and not ErrStoreDown", err)
		}
	}
	if a.Degraded() {
		t.Fatal("three timeouts at one instant switched to degraded")
	}
	clock.Advance(time.Second)
	if _, err := store.GetRoom(ctx, "paused"); !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("a call to a paused Redis: %v", err)
	}
	if !a.Degraded() {
		t.Fatalf("timeouts for 1 s did not switch: %+v", a.State())
	}

	// The pause ends (a call with time to wait answers), and the flag is fed
	// again from scratch.
	slow := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = slow.Close() })
	if err := slow.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	a = queue.NewAvailability(clock, nil)
	rdb.AddHook(redisstore.Hook(a))
	srv.Kill()
	_, err := store.GetRoom(ctx, "gone")
	if !errors.Is(err, queue.ErrStoreDown) {
		t.Fatalf("a call to a killed Redis: %v, want ErrStoreDown", err)
	}
	if _, err := store.GetRoom(ctx, "gone"); !errors.Is(err, queue.ErrStoreDown) {
		t.Fatalf("a call to a killed Redis: %v, want ErrStoreDown", err)
	}
	if st := a.State(); !st.Degraded || !strings.Contains(st.Reason, "refused") {
		t.Fatalf("two refused connections did not switch at once: %+v", st)
	}
}

func TestAvailabilityDrillOverridesAndReturnsToAutomatic(t *testing.T) {
	a := queue.NewAvailability(clockwork.NewFakeClock(), nil)
	on, off := true, false
	a.Force(&on)
	if st := a.State(); !st.Degraded || st.Reason == "" || st.Forced == nil || !*st.Forced {
		t.Fatalf("forced on: %+v", st)
	}
	a.Record(errRefused)
	a.Record(errRefused)
	// Ending a drill with false is automatic, not "forced normal": Redis
	// is down, so the server stays degraded.
	a.Force(&off)
	if st := a.State(); !st.Degraded || st.Forced != nil || st.Reason == "forced by an operator (drill)" {
		t.Fatalf("drill ended with false while Redis is down: %+v", st)
	}
	a.Force(nil)
	if st := a.State(); !st.Degraded || st.Forced != nil {
		t.Fatalf("back to automatic with Redis down: %+v", st)
	}
}

// TestDrillEndedWithFalseStillFailsOver: a drill ended with false or null
// (from this server or through Redis) leaves the flag automatic, so a real
// outage afterwards still switches to degraded mode.
func TestDrillEndedWithFalseStillFailsOver(t *testing.T) {
	on, off := true, false
	for name, end := range map[string]*bool{"false": &off, "null": nil} {
		t.Run(name, func(t *testing.T) {
			a := queue.NewAvailability(clockwork.NewFakeClock(), nil)
			a.Force(&on)
			a.Force(end)
			if a.Degraded() {
				t.Fatal("still degraded after the drill ended with Redis up")
			}
			a.Record(errRefused)
			a.Record(errRefused)
			if !a.Degraded() {
				t.Fatalf("a real outage after the drill did not switch: %+v", a.State())
			}
		})
	}
}

// TestAvailabilityNoticesAKilledRedis: with a real redis-server killed, the
// probe loop (500 ms, fake clock) of a FailFast client hears the connection
// refused and switches within three probes, and back after a restart once
// four probes answer.
func TestAvailabilityNoticesAKilledRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewUniversalClient(redisstore.FailFast(&redis.UniversalOptions{Addrs: []string{srv.Addr()}}))
	t.Cleanup(func() { _ = rdb.Close() })
	clock := clockwork.NewFakeClock()
	a := queue.NewAvailability(clock, nil)
	store := redisstore.New(rdb, redistest.Prefix(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx, store.Probe) }()
	probes := func(n int) {
		for i := 0; i < n; i++ {
			if err := clock.BlockUntilContext(ctx, 1); err != nil {
				t.Fatal(err)
			}
			clock.Advance(500 * time.Millisecond)
		}
		_ = clock.BlockUntilContext(ctx, 1) // the last probe has been recorded
	}
	probes(2)
	if a.Degraded() {
		t.Fatal("degraded while Redis answers")
	}
	// Within three probes: two refusals switch at once, but on a loaded
	// machine a probe may fail uncertain instead (a timeout, or a reset on
	// the killed server's last pooled connection), and then the failures
	// switch once they span DefaultDegradeAfter, at the third (two busy
	// runs failed at two probes; not caught in the act).
	srv.Kill()
	probes(3)
	if !a.Degraded() {
		t.Fatalf("not degraded 1.5 s after Redis died: %+v", a.State())
	}
	srv.Restart(t)
	probes(4)
	if a.Degraded() {
		t.Fatalf("still degraded after Redis came back: %+v", a.State())
	}
	// A drill set on one server reaches every server through Redis.
	on := true
	if err := store.SetDrill(ctx, &on); err != nil {
		t.Fatal(err)
	}
	probes(1)
	if st := a.State(); !st.Degraded || st.Forced == nil {
		t.Fatalf("drill not picked up: %+v", st)
	}
	// Ending it with false returns every server to automatic, and a real
	// outage afterwards still switches.
	off := false
	if err := store.SetDrill(ctx, &off); err != nil {
		t.Fatal(err)
	}
	probes(1)
	if st := a.State(); st.Degraded || st.Forced != nil {
		t.Fatalf("drill ended with false: %+v", st)
	}
	srv.Kill()
	probes(3) // as above
	if st := a.State(); !st.Degraded || st.Reason == "" {
		t.Fatalf("a real outage after the drill was not noticed: %+v", st)
	}
	cancel()
	<-done
}

// TestBusyPoolIsNotAnOutage: when every connection of this server is in use
// (polling load), calls time out waiting for the pool. That is this server
// being overloaded, not Redis gone: the caller gets queue.ErrBusy (503
// busy) and the availability flag does not switch to degraded mode, which
// would turn the line off because of load alone. Nor do calls whose own
// deadline passed while they waited for the pool.
func TestBusyPoolIsNotAnOutage(t *testing.T) {
	srv := redistest.Shared(t)
	clock := clockwork.NewFakeClock()
	a := queue.NewAvailability(clock, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1, PoolTimeout: 50 * time.Millisecond, MaxRetries: -1})
	rdb.AddHook(redisstore.Hook(a))
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := redistest.Prefix(t)
	store := redisstore.New(rdb, prefix)
	ctx := context.Background()

	// The only connection blocks in BLPOP until the test pushes to its key.
	wake := prefix + "wake"
	held := make(chan error, 1)
	go func() { held <- rdb.BLPop(ctx, 10*time.Second, wake).Err() }()
	for rdb.PoolStats().TotalConns != 1 || rdb.PoolStats().IdleConns != 0 {
		select {
		case err := <-held:
			t.Fatalf("BLPOP ended early: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	for range 5 {
		_, err := store.GetRoom(ctx, "busy")
		if !errors.Is(err, queue.ErrBusy) || errors.Is(err, queue.ErrUnavailable) {
			t.Fatalf("a call on a full pool: %v, want ErrBusy and not ErrUnavailable", err)
		}
	}
	// Calls whose own deadline passes while they wait for the pool ran out
	// of time on this server: not counted either, even after a timeout that
	// started a run of failures 2 s ago (they would end it in degraded mode).
	a.Record(errTimeout)
	clock.Advance(2 * time.Second)
	for range 3 {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		start := time.Now()
		_, err := store.GetRoom(short, "busy")
		took := time.Since(start)
		cancel()
		// A goroutine that wakes after the pool's own timeout too (a starved
		// machine) finds both ready, and Go's select picks either: busy is
		// then as true an answer, and is not counted either.
		late := took >= 50*time.Millisecond && errors.Is(err, queue.ErrBusy)
		if !errors.Is(err, context.DeadlineExceeded) && !late {
			t.Fatalf("a call that ran out of time on a full pool: %v after %v", err, took)
		}
	}
	if a.Degraded() {
		t.Fatalf("a busy pool switched to degraded mode: %+v", a.State())
	}
	// The probe has a connection of its own, so it still hears Redis.
	probeRdb := redis.NewUniversalClient(redisstore.ProbeOptions(redis.UniversalOptions{Addrs: []string{srv.Addr()}}))
	t.Cleanup(func() { _ = probeRdb.Close() })
	if _, err := redisstore.New(probeRdb, prefix).Probe(ctx); err != nil {
		t.Fatalf("the probe on its own connection while the pool is full: %v", err)
	}
	a.RecordProbe(queue.ErrBusy) // busy is no answer: it neither ends nor extends the run
	a.Record(errTimeout)
	if !a.Degraded() {
		t.Fatal("a busy outcome ended the run of failures")
	}
	if err := srv.Client(t).LPush(ctx, wake, "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetRoom(ctx, "busy"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Fatalf("after the pool freed up: %v, want ErrRoomNotFound", err)
	}
}

// TestSettledWakesAtAnAnswerOrASwitch: a request waiting out a stall
// (server.rideStall) hears the store's next answer, or the switch to
// degraded mode, and nothing before.
func TestSettledWakesAtAnAnswerOrASwitch(t *testing.T) {
	clock := clockwork.NewFakeClock()
	a := queue.NewAvailability(clock, nil).SetDegradeAfter(time.Second)
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	ch := a.Settled()
	a.Record(errTimeout)
	if closed(ch) {
		t.Fatal("woken by a failure")
	}
	a.Record(nil)
	if !closed(ch) {
		t.Fatal("not woken by an answer")
	}
	ch = a.Settled()
	a.Record(errTimeout)
	clock.Advance(time.Second)
	a.Record(errTimeout) // a second of failures: degraded mode
	if !a.Degraded() || !closed(ch) {
		t.Fatalf("switch: degraded %v, woken %v", a.Degraded(), closed(ch))
	}
	if a.DegradeAfter() != time.Second {
		t.Fatalf("DegradeAfter = %v", a.DegradeAfter())
	}
}
