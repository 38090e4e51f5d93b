package push

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jonboulle/clockwork"
	"github.com/waitroom/waitroom/internal/vocab"
)

// nopTransport writes nothing anywhere.
type nopTransport struct{}

func (nopTransport) Name() string                                   { return "fake" }
func (nopTransport) WriteMessage(_ context.Context, _ []byte) error { return nil }
func (nopTransport) Ping(context.Context) error                     { return nil }
func (nopTransport) Close(websocket.StatusCode, string) error       { return nil }

// checkSchedule fails unless every ticket of every room has exactly one
// schedule entry, pointing back at it, with the time touch would give it.
func checkSchedule(t *testing.T, h *Hub) {
	t.Helper()
	for id, r := range h.rooms {
		if len(r.wakes) != len(r.tickets) {
			t.Fatalf("room %s: %d schedule entries for %d tickets", id, len(r.wakes), len(r.tickets))
		}
		for i, w := range r.wakes {
			if w.t.idx != i || r.tickets[w.t.id] != w.t {
				t.Fatalf("room %s: entry %d is ticket %s (idx %d), not the room's", id, i, w.t.id, w.t.idx)
			}
			want := h.mono(minTime(w.t.next, w.t.pingAt))
			if w.t.force {
				want = h.mono(time.Time{})
			}
			if w.at != want {
				t.Fatalf("room %s: ticket %s scheduled at %d, want %d", id, w.t.id, w.at, want)
			}
		}
	}
}

// TestTheScheduleGivesWhatAWalkOfEveryTicketGave: through random
// connections coming and going, updates applied, notices and time passing,
// each tick's due tickets are exactly those a walk of every ticket finds
// (its fetch is due, or it is forced), and each ticket's keep-alive comes
// when it would; the schedule stays one entry per ticket.
func TestTheScheduleGivesWhatAWalkOfEveryTicketGave(t *testing.T) {
	clock := clockwork.NewFakeClock()
	h := NewHub(idleFetcher{}, Options{Clock: clock, PingInterval: 3 * time.Second, MaxSilence: 2 * time.Second, SendQueue: 1 << 12, Logger: slog.New(slog.DiscardHandler)})
	rng := rand.New(rand.NewPCG(1, 2))
	var open []*client
	for step := range 1500 {
		now := clock.Now()
		switch k := rng.IntN(10); {
		case k < 4: // a connection opens, its first read current or not
			c := newClient(nopTransport{}, fmt.Sprintf("r%d", rng.IntN(3)), fmt.Sprintf("T%d", rng.IntN(60)), 1<<12)
			first := First{Payload: []byte("first")}
			if rng.IntN(2) == 0 {
				first.State, first.Interval, first.Mark = vocab.StateWaiting, time.Duration(1+rng.IntN(3))*time.Second, h.NoticeMark()
			}
			if !h.register(c, first) {
				t.Fatal("register")
			}
			open = append(open, c)
		case k < 6 && len(open) > 0: // one closes
			i := rng.IntN(len(open))
			c := open[i]
			c.kick(0, "", nil)
			h.unregister(c)
			open = slices.Delete(open, i, i+1)
		case k < 7: // a notice that could not queue
			h.markForced(notice{room: fmt.Sprintf("r%d", rng.IntN(3)), tickets: []string{fmt.Sprintf("T%d", rng.IntN(60))}, all: rng.IntN(8) == 0})
		default: // time passes: a tick
			clock.Advance(time.Duration(rng.IntN(700)) * time.Millisecond)
			now = clock.Now()
			h.mu.Lock()
			want := map[string][]string{}
			pings := map[*client]time.Time{}
			for id, r := range h.rooms {
				for tid, tk := range r.tickets {
					if r.force || tk.force || !now.Add(dueSlack).Before(tk.next) {
						want[id] = append(want[id], tid)
					}
					for _, c := range tk.clients {
						pings[c] = c.pingAt
					}
				}
			}
			h.mu.Unlock()
			batches := h.due(now)
			got := map[string][]string{}
			for _, b := range batches {
				got[b.room] = append(got[b.room], b.tickets...)
			}
			for id := range want {
				slices.Sort(want[id])
				slices.Sort(got[id])
				if !slices.Equal(want[id], got[id]) {
					t.Fatalf("step %d, room %s: due %v, want %v", step, id, got[id], want[id])
				}
			}
			if len(got) != len(want) {
				t.Fatalf("step %d: due rooms %v, want %v", step, got, want)
			}
			h.mu.Lock()
			for c, was := range pings {
				want := was
				if !now.Before(was) { // due: asked for, and the next one after PingInterval
					want = now.Add(h.o.PingInterval)
				}
				if !c.pingAt.Equal(want) {
					t.Fatalf("step %d: a connection's keep-alive was due at %v, now at %v; want %v", step, was, c.pingAt, want)
				}
			}
			h.mu.Unlock()
			for _, b := range batches {
				ups, _ := idleFetcher{}.Fetch(nil, b.room, b.tickets)
				for i := range ups {
					ups[i].Payload = fmt.Appendf(nil, "%d", step) // changed: sent
					ups[i].Interval = time.Duration(1+rng.IntN(3)) * time.Second
				}
				h.apply(b, ups, now)
			}
		}
		h.mu.Lock()
		checkSchedule(t, h)
		h.mu.Unlock()
	}
}

// BenchmarkTick is one hub tick's bookkeeping with 20,000 idle waiters on
// a 10 s tier, their slots spread over it: which are due, their updates
// applied (unchanged: nothing is written). No keep-alive falls due (their
// writers would be most of the time). A tick comes every 250 ms, so each
// waiter is due once in 40 ticks.
//
//	go test ./internal/push/ -run '^$' -bench Tick -benchtime=400x
func BenchmarkTick(b *testing.B) {
	clock := clockwork.NewFakeClock()
	h := NewHub(idleFetcher{}, Options{Clock: clock, PingInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	const n = 20_000
	payload := map[string][]byte{}
	for i := range n {
		id := fmt.Sprintf("T%d", i)
		payload[id] = []byte(firstPayload(id))
		c := newClient(nopTransport{}, "r", id, 4)
		if !h.register(c, First{Payload: payload[id], State: vocab.StateWaiting, Interval: 10 * time.Second, Mark: h.NoticeMark()}) {
			b.Fatal("register")
		}
		clock.Advance(10 * time.Second / n)
	}
	var ups []Update
	tick := func() {
		clock.Advance(h.o.Tick)
		now := clock.Now()
		for _, bt := range h.due(now) {
			ups = ups[:0]
			for _, id := range bt.tickets {
				ups = append(ups, Update{Ticket: id, State: vocab.StateWaiting, Interval: 10 * time.Second, Payload: payload[id]})
			}
			h.apply(bt, ups, now)
		}
	}
	for range 40 { // every waiter fetched once
		tick()
	}
	b.ResetTimer()
	for range b.N {
		tick()
	}
}
