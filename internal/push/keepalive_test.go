package push

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"
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
