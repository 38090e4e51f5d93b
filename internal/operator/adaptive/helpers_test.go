package adaptive_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// answer is one scripted reply of the fake Prometheus.
type answer struct {
	status int
	body   string
	hang   bool // answer nothing until the client gives up
}

func reading(v float64) answer {
	return answer{status: 200, body: fmt.Sprintf(
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"checkout"},"value":[1764000000.123,"%g"]}]}}`, v)}
}

// promServer answers the Prometheus query API with the scripted answers in
// order; a request with none left fails the test.
type promServer struct {
	t        *testing.T
	srv      *httptest.Server
	answers  chan answer
	requests atomic.Int64
	query    atomic.Value // the last query string received
}

func newPromServer(t *testing.T) *promServer {
	p := &promServer{t: t, answers: make(chan answer, 100)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if r.URL.Path != "/api/v1/query" {
			t.Errorf("prometheus: path %q", r.URL.Path)
		}
		p.query.Store(r.URL.Query().Get("query"))
		var a answer
		select {
		case a = <-p.answers:
		default:
			t.Errorf("prometheus: request %d has no scripted answer", p.requests.Load())
			a = answer{status: 500, body: "unscripted"}
		}
		if a.hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *promServer) script(as ...answer) {
	for _, a := range as {
		p.answers <- a
	}
}

// syncBuffer collects log output written from the controller's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), substr)
}

const window = 60 * time.Second

// env is one deployment: a Redis prefix, a fake clock, a scripted Prometheus
// and any number of controllers (servers) running on them.
type env struct {
	t           *testing.T
	ctx         context.Context
	cancel      context.CancelFunc
	clock       *clockwork.FakeClock
	store       *redisstore.Store
	prom        *promServer
	logs        *syncBuffer
	transitions chan adaptive.Transition
	prefix      string
	running     int
}

func newEnv(t *testing.T) *env {
	rdb := redistest.Shared(t).Client(t)
	prefix := redistest.Prefix(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, cancel: cancel, clock: clockwork.NewFakeClock(), store: redisstore.New(rdb, prefix),
		prom: newPromServer(t), logs: &syncBuffer{}, transitions: make(chan adaptive.Transition, 100),
		prefix: prefix}
	return e
}

// putRoom creates an adaptive room on the scripted Prometheus: open at 0.7,
// close after 3 windows of 60 s below 0.5.
func (e *env) putRoom(room string) queue.Settings {
	s := queue.DefaultSettings()
	s.Activation = queue.ActivationAdaptive
	s.Adaptive = &queue.Adaptive{Signal: queue.SignalPrometheus, PrometheusURL: e.prom.srv.URL,
		Query:  `avg(rate(process_cpu_seconds_total{job="checkout"}[1m]))`,
		OpenAt: 0.7, CloseAt: 0.5, WindowS: int64(window / time.Second), WindowsToClose: 3}
	if err := s.Validate(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.PutRoom(e.ctx, room, s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// start runs one more server's controller and returns once it has done its
// first poll.
func (e *env) start(o adaptive.Options) *adaptive.Controller {
	e.t.Helper()
	o.Clock = e.clock
	o.Logger = slog.New(slog.NewTextHandler(e.logs, nil))
	o.OnTransition = func(tr adaptive.Transition) { e.transitions <- tr }
	if o.ReadTimeout == 0 {
		// Real time: a hanging Prometheus costs the test this much, and a
		// scripted answer must come within it on a loaded machine (at 200 ms
		// a read of the local fake timed out beside the browser tests).
		o.ReadTimeout = 3 * time.Second
	}
	c := adaptive.New(redistest.Shared(e.t).Client(e.t), e.prefix, e.store, o)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(e.ctx) }()
	e.t.Cleanup(func() { e.cancel(); <-done })
	e.running++
	e.wait()
	return c
}

// wait returns once every controller has finished its poll and waits on
// the clock again.
func (e *env) wait() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	if err := e.clock.BlockUntilContext(ctx, e.running); err != nil {
		e.t.Fatalf("controllers did not finish their poll: %v", err)
	}
}

// advance moves the clock by d and waits for the polls it starts.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.clock.Advance(d)
	e.wait()
}

// nextWindow scripts one answer and lets a window pass.
func (e *env) nextWindow(a answer) {
	e.t.Helper()
	e.prom.script(a)
	e.advance(window)
}

func (e *env) state(c *adaptive.Controller, room string) adaptive.State {
	e.t.Helper()
	st, ok := c.State(room)
	if !ok {
		e.t.Fatalf("no state for room %s", room)
	}
	return st
}

func (e *env) transition() adaptive.Transition {
	e.t.Helper()
	select {
	case tr := <-e.transitions:
		return tr
	default:
		e.t.Fatal("no transition reported")
		return adaptive.Transition{}
	}
}

func (e *env) noTransition() {
	e.t.Helper()
	select {
	case tr := <-e.transitions:
		e.t.Fatalf("unexpected transition %+v", tr)
	default:
	}
}
