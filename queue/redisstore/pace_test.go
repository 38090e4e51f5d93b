package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/redisstore"
	"github.com/waitroom/waitroom/queue/redistest"
)

// paceRig is a room with a long line and the admission loops of one or
// more servers (Lines on one real Redis and one fake clock), counting what
// they admit.
type paceRig struct {
	t       *testing.T
	f       *fixture
	ctx     context.Context
	servers int

	mu       sync.Mutex
	admitted int
	seen     []chan queue.Settings // per server: the settings of each tick
}

const paceStep = 50 * time.Millisecond // divides every interval used here

func newPaceRig(t *testing.T, servers, waiters int, s queue.Settings) *paceRig {
	t.Helper()
	prefix := redistest.Prefix(t)
	f := newFixture(t, prefix, nil)
	paused := s
	paused.Paused = true
	if err := f.line.PutRoom(context.Background(), "sale", paused); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < waiters; i++ {
		f.enter(t, "sale", fmt.Sprintf("v:%04d", i))
	}
	rdb := redistest.Shared(t).Client(t)
	listening := psubscribers(t, rdb)
	ctx, cancel := context.WithCancel(context.Background())
	r := &paceRig{t: t, f: f, ctx: ctx, servers: servers}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := 0; i < servers; i++ {
		line := f.line
		if i > 0 {
			line = queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), prefix), f.keys,
				queue.LineOptions{Clock: f.clock, Jitter: func(time.Duration) time.Duration { return 0 }})
		}
		seen := make(chan queue.Settings, 1000)
		r.seen = append(r.seen, seen)
		adm := queue.NewAdmitter(line)
		adm.OnTick = func(_ string, s queue.Settings, res queue.TickResult) {
			r.mu.Lock()
			r.admitted += len(res.Admitted)
			r.mu.Unlock()
			select {
			case seen <- s:
			default:
			}
		}
		wg.Go(func() { _ = adm.Run(ctx) })
	}
	// The loops hear of changes through Redis: wait until every server
	// listens, or the first change could go by unheard.
	deadline := time.Now().Add(10 * time.Second)
	for psubscribers(t, rdb) < listening+servers {
		if time.Now().After(deadline) {
			t.Fatal("the admission loops never subscribed to settings changes")
		}
		time.Sleep(10 * time.Millisecond) // nothing to await: Redis is asked again
	}
	r.settle()
	r.change(func(x *queue.Settings) { *x = s })
	return r
}

// psubscribers counts Redis's clients with a pattern subscription.
func psubscribers(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Skipf("needs CLIENT LIST (a real redis-server) to know the loops listen: %v", err)
	}
	n := 0
	for _, c := range strings.Split(list, "\n") {
		if strings.Contains(c, " psub=") && !strings.Contains(c, " psub=0 ") {
			n++
		}
	}
	return n
}

// settle waits until every server's list loop and room loop wait on the clock.
func (r *paceRig) settle() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	if err := r.f.clock.BlockUntilContext(ctx, 2*r.servers); err != nil {
		r.t.Fatalf("admission loops never waited on the clock: %v", err)
	}
}

// change edits the room's settings (as the admin API and the dashboard do)
// and waits until every server has ticked with them, without moving the clock:
// the change must wake the loops, not wait out the old interval.
func (r *paceRig) change(edit func(*queue.Settings)) {
	r.t.Helper()
	s, err := r.f.store.GetRoom(r.ctx, "sale")
	if err != nil {
		r.t.Fatal(err)
	}
	edit(&s)
	if err := r.f.line.PutRoom(r.ctx, "sale", s); err != nil {
		r.t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for i, seen := range r.seen {
		for got := false; !got; {
			select {
			case x := <-seen:
				got = x.BatchIntervalMS == s.BatchIntervalMS && x.BatchSize == s.BatchSize && x.Capacity == s.Capacity && x.Paused == s.Paused
			case <-timeout:
				r.t.Fatalf("server %d never ticked with the new settings %+v", i, s)
			}
		}
	}
	r.settle()
}

// run advances the clock by d in steps, letting every loop tick at each,
// and returns how many were admitted meanwhile.
func (r *paceRig) run(d time.Duration) int {
	r.t.Helper()
	r.mu.Lock()
	before := r.admitted
	r.mu.Unlock()
	for passed := time.Duration(0); passed < d; passed += paceStep {
		r.f.clock.Advance(paceStep)
		r.settle()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.admitted - before
}

// expectPace lets one new interval pass (the change takes effect within
// it), then measures ten intervals: ten batches, give or take the one
// whose tick falls on the window's edge.
func (r *paceRig) expectPace(what string, intervalMS, batch int64) {
	r.t.Helper()
	interval := time.Duration(intervalMS) * time.Millisecond
	r.run(interval)
	got := r.run(10 * interval)
	want := int(10 * batch)
	if got < want-int(batch) || got > want+int(batch) {
		r.t.Errorf("%s: %d admitted in 10 × %v, want %d (±%d)", what, got, interval, want, batch)
	}
}

func paceSettings() queue.Settings {
	s := queue.DefaultSettings()
	s.BatchSize, s.BatchIntervalMS, s.Capacity = 2, 200, 100_000
	s.SessionTTLS, s.AbandonAfterS, s.JitterMS = 86_400, 86_400, 0
	return s
}

// TestPaceChangesKeepTheLineMoving: 200 → 1000 → 250 ms and batch size up
// and down, with people waiting: after each change the line moves at the
// new pace within one new interval, on one server and on two sharing Redis.
func TestPaceChangesKeepTheLineMoving(t *testing.T) {
	for _, servers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d servers", servers), func(t *testing.T) {
			r := newPaceRig(t, servers, 400, paceSettings())
			r.expectPace("2 per 200 ms", 200, 2)
			r.change(func(s *queue.Settings) { s.BatchIntervalMS = 1000 })
			r.expectPace("slowed to 2 per 1000 ms", 1000, 2)
			r.change(func(s *queue.Settings) { s.BatchIntervalMS = 250 })
			r.expectPace("sped up to 2 per 250 ms", 250, 2)
			r.change(func(s *queue.Settings) { s.BatchSize = 5 })
			r.expectPace("batch up to 5", 250, 5)
			r.change(func(s *queue.Settings) { s.BatchSize = 1 })
			r.expectPace("batch down to 1", 250, 1)
			r.change(func(s *queue.Settings) { s.BatchIntervalMS = 50; s.BatchSize = 3 })
			r.expectPace("3 per 50 ms", 50, 3)
		})
	}
}

// TestCapacityChangesTakeEffectAtOnce: with slots held for the whole test,
// lowering capacity below the shoppers inside stops admissions, raising it
// lets the line move again at the pace until the new capacity is full. A
// change wakes the loops, whose tick at once admits one batch.
func TestCapacityChangesTakeEffectAtOnce(t *testing.T) {
	for _, servers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d servers", servers), func(t *testing.T) {
			s := paceSettings()
			s.Capacity = 10
			r := newPaceRig(t, servers, 100, s)
			r.run(5 * time.Second)
			r.expectTotal("capacity 10", 10)
			r.change(func(s *queue.Settings) { s.Capacity = 30 })
			r.run(time.Second)
			r.expectTotal("capacity raised to 30, a second later", 10+2+5*2)
			r.run(5 * time.Second)
			r.expectTotal("capacity 30", 30)
			r.change(func(s *queue.Settings) { s.Capacity = 5 })
			r.run(5 * time.Second)
			r.expectTotal("capacity lowered below the shoppers inside", 30)
			r.change(func(s *queue.Settings) { s.Capacity = 40 })
			r.run(600 * time.Millisecond)
			r.expectTotal("capacity raised to 40, 600 ms later", 30+2+3*2)
			r.run(5 * time.Second)
			r.expectTotal("capacity 40", 40)
		})
	}
}

func (r *paceRig) expectTotal(what string, want int) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.admitted != want {
		r.t.Fatalf("%s: %d admitted in all, want %d", what, r.admitted, want)
	}
}
