package push

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"
	"github.com/waitroom/waitroom/internal/vocab"
)

// pingTransport reports each ping on pings.
type pingTransport struct {
	name  string
	pings chan string
}

func (t *pingTransport) Name() string                               { return "fake" }
func (t *pingTransport) WriteMessage(context.Context, []byte) error { return nil }
func (t *pingTransport) Close(websocket.StatusCode, string) error   { return nil }
func (t *pingTransport) Ping(context.Context) error                 { t.pings <- t.name; return nil }

// TestKeepAliveFollowsEachConnectionsOwnSchedule: two connections of one
// ticket, opened 3 s apart, are each pinged every PingInterval from their
// own start: the ticket's earliest due time lets a tick skip the ticket
// between pings without skipping the later connection's turn.
func TestKeepAliveFollowsEachConnectionsOwnSchedule(t *testing.T) {
	clock := clockwork.NewFakeClock()
	h := NewHub(idleFetcher{}, Options{Clock: clock, PingInterval: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	pings := make(chan string, 16)
	a := newClient(&pingTransport{name: "a", pings: pings}, "r", "T", 4)
	b := newClient(&pingTransport{name: "b", pings: pings}, "r", "T", 4)
	t0 := clock.Now()
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	if !h.register(a, First{}) {
		t.Fatal("register a")
	}
	t.Cleanup(func() { h.unregister(a) })

	// step moves the clock to at (seconds after a opened) and runs a tick's
	// bookkeeping; want is the connection pinged then ("" none), and aNext
	// and bNext the connections' next keep-alive times after it.
	step := func(at float64, want string, aNext, bNext float64) {
		t.Helper()
		clock.Advance(sec(at).Sub(clock.Now()))
		h.due(clock.Now())
		h.mu.Lock()
		gotA, gotB := a.pingAt, b.pingAt
		h.mu.Unlock()
		if !gotA.Equal(sec(aNext)) {
			t.Errorf("at %.1fs a's next keep-alive at %v, want %.1fs", at, gotA.Sub(t0), aNext)
		}
		if bNext > 0 && !gotB.Equal(sec(bNext)) {
			t.Errorf("at %.1fs b's next keep-alive at %v, want %.1fs", at, gotB.Sub(t0), bNext)
		}
		if want == "" {
			return
		}
		select {
		case got := <-pings:
			if got != want {
				t.Fatalf("at %.1fs pinged %s, want %s", at, got, want)
			}
		case <-time.After(wait):
			t.Fatalf("at %.1fs no ping, want %s", at, want)
		}
	}
	step(1, "", 5, 0)
	step(3, "", 5, 0)
	if !h.register(b, First{}) {
		t.Fatal("register b")
	}
	t.Cleanup(func() { h.unregister(b) })
	step(4.9, "", 5, 8)
	step(5, "a", 10, 8)
	step(7.9, "", 10, 8)
	step(8, "b", 10, 13)
	step(9.9, "", 10, 13)
	step(10, "a", 15, 13)
	step(13, "b", 15, 18)
}

// TestKeepAliveOnlyAfterSilence: a connection that is sent messages more
// often than PingInterval is never pinged (its messages are the traffic
// that keeps proxies open); once the messages stop, the keep-alive comes
// PingInterval after the last one.
func TestKeepAliveOnlyAfterSilence(t *testing.T) {
	clock := clockwork.NewFakeClock()
	h := NewHub(idleFetcher{}, Options{Clock: clock, PingInterval: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	pings := make(chan string, 16)
	// Room for every message, whether or not the writer ran meanwhile.
	a := newClient(&pingTransport{name: "a", pings: pings}, "r", "T", 16)
	if !h.register(a, First{}) {
		t.Fatal("register a")
	}
	t.Cleanup(func() { h.unregister(a) })
	t0 := clock.Now()
	pingAt := func() time.Duration {
		h.mu.Lock()
		defer h.mu.Unlock()
		return a.pingAt.Sub(t0)
	}
	// A message every 2 s for 20 s: each tick's bookkeeping runs, none pings.
	for i := 1; i <= 10; i++ {
		clock.Advance(2 * time.Second)
		now := clock.Now()
		h.due(now)
		u := Update{Ticket: "T", State: vocab.StateWaiting, Interval: 2 * time.Second, Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
		h.apply(batch{room: "r", tickets: []string{"T"}, force: []bool{false}}, []Update{u}, now)
		if got, want := pingAt(), time.Duration(2*i+5)*time.Second; got != want {
			t.Fatalf("after the message at %ds the keep-alive is due at %v, want %v", 2*i, got, want)
		}
		if a.pingDue.Load() {
			t.Fatalf("a keep-alive was asked for at %ds, while messages flowed", 2*i)
		}
	}
	// Silence: the keep-alive comes 5 s after the last message (at 20 s).
	clock.Advance(4900 * time.Millisecond)
	h.due(clock.Now())
	if a.pingDue.Load() || pingAt() != 25*time.Second {
		t.Fatalf("at 24.9s: keep-alive asked %v, due at %v; want not yet, 25s", a.pingDue.Load(), pingAt())
	}
	clock.Advance(100 * time.Millisecond)
	h.due(clock.Now())
	select {
	case <-pings:
	case <-time.After(wait):
		t.Fatal("no keep-alive after 5 s of silence")
	}
	if got := pingAt(); got != 30*time.Second {
		t.Errorf("next keep-alive due at %v, want 30s", got)
	}
}
