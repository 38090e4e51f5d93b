package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisstore"
	"github.com/waitroom/waitroom/internal/redistest"
	"github.com/waitroom/waitroom/queue"
)

// errRefused is an outage as the store's adapter reports it.
var errRefused = fmt.Errorf("redisstore: call: %w: %w", queue.ErrUnavailable,
	&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})

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
// probe loop (500 ms, fake clock) switches within two probes, and back after
// a restart once four probes answer.
func TestAvailabilityNoticesAKilledRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
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
	srv.Kill()
	probes(2)
	if !a.Degraded() {
		t.Fatalf("not degraded 1 s after Redis died: %+v", a.State())
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
	probes(2)
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
// would turn the line off because of load alone.
func TestBusyPoolIsNotAnOutage(t *testing.T) {
	srv := redistest.Shared(t)
	a := queue.NewAvailability(clockwork.NewFakeClock(), nil)
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
	if a.Degraded() {
		t.Fatalf("a busy pool switched to degraded mode: %+v", a.State())
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
