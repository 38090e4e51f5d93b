package push

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/waitroom/waitroom/internal/vocab"
)

func TestFanOutOneTicketTwoTransports(t *testing.T) {
	e := newEnv(t, Options{}, func(_, id string, n int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Payload: []byte(fmt.Sprintf(`{"ticket":%q,"n":%d}`, id, n))}
	}, nil)
	ws := e.dialWS("r", "T", nil)
	sse := e.dialSSE("r", "T")
	if got := ws.next(); got != firstPayload("T") {
		t.Fatalf("ws first = %s", got)
	}
	if got := sse.next(); got != firstPayload("T") {
		t.Fatalf("sse first = %s", got)
	}

	e.step()
	want := `{"ticket":"T","n":1}`
	if got := ws.next(); got != want {
		t.Errorf("ws got %s, want %s", got, want)
	}
	if got := sse.next(); got != want {
		t.Errorf("sse got %s, want %s", got, want)
	}
	calls := e.f.takeCalls()
	if len(calls) != 1 || !slices.Equal(calls[0].tickets, []string{"T"}) {
		t.Errorf("fetches = %+v, want one for [T]", calls)
	}
	if s := e.hub.Stats(); s.Connections["ws"] != 1 || s.Connections["sse"] != 1 || s.Tickets != 1 {
		t.Errorf("stats = %+v", s)
	}
}

func TestTierThrottle(t *testing.T) {
	const interval = 2 * time.Second
	sentinel := `{"sentinel":true}`
	finish := func(_, _ string, _ int, _ time.Time) Update {
		return Update{State: vocab.StateAdmitted, Payload: []byte(sentinel)}
	}
	// readUntilSentinel forces a final push and returns what came before it:
	// messages arrive in order, so anything sent earlier is among them.
	readUntilSentinel := func(e *env, ws *wsClient) []string {
		e.f.setFn(finish)
		e.hub.Notify("r", []string{"T"})
		var got []string
		for m := ws.next(); m != sentinel; m = ws.next() {
			got = append(got, m)
		}
		return got
	}

	t.Run("changing", func(t *testing.T) {
		e := newEnv(t, Options{}, func(_, _ string, n int, now time.Time) Update {
			return Update{
				State:    vocab.StateWaiting,
				Interval: interval,
				Payload:  []byte(fmt.Sprintf(`{"n":%d,"at":%d}`, n, now.UnixMilli())),
			}
		}, nil)
		start := time.UnixMilli(e.clock.Now().UnixMilli()) // payloads carry milliseconds
		ws := e.dialWS("r", "T", nil)
		if got := ws.next(); got != firstPayload("T") {
			t.Fatalf("first = %s", got)
		}
		for range 16 { // 4s in 250ms steps
			e.step()
		}
		got := readUntilSentinel(e, ws)
		last := start // the first message was sent at start
		for _, m := range got {
			var v struct{ At int64 }
			if err := json.Unmarshal([]byte(m), &v); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(v.At)
			if gap := at.Sub(last); gap < interval {
				t.Errorf("update at +%v only %v after the previous one", at.Sub(start), gap)
			}
			last = at
		}
		if len(got) != 2 {
			t.Errorf("got %d position updates in 4s at a 2s tier, want 2: %v", len(got), got)
		}
	})

	t.Run("unchanged", func(t *testing.T) {
		e := newEnv(t, Options{}, waiting(interval), nil)
		ws := e.dialWS("r", "T", nil)
		ws.next()
		for range 16 {
			e.step()
		}
		if n := len(e.f.takeCalls()); n == 0 {
			t.Fatal("never fetched")
		}
		if got := readUntilSentinel(e, ws); len(got) != 0 {
			t.Errorf("unchanged payload was sent again: %v", got)
		}
	})
}

func TestBatchOneFetchPerRoomPerTick(t *testing.T) {
	intervals := map[string]time.Duration{"a1": 500 * time.Millisecond, "a2": 10 * time.Second, "a3": 500 * time.Millisecond, "b1": 10 * time.Second}
	e := newEnv(t, Options{}, func(_, id string, _ int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Interval: intervals[id], Payload: []byte(firstPayload(id))}
	}, nil)
	e.dialWS("A", "a1", nil).next()
	e.dialWS("A", "a2", nil).next()
	e.dialSSE("A", "a2").next() // second tab: fetched once
	e.dialWS("A", "a3", nil).next()
	e.dialWS("B", "b1", nil).next()

	byRoom := func(calls []fetchCall) map[string][]string {
		m := make(map[string][]string)
		for _, c := range calls {
			if _, dup := m[c.room]; dup {
				t.Errorf("room %s fetched twice in one tick", c.room)
			}
			m[c.room] = slices.Sorted(slices.Values(c.tickets))
		}
		return m
	}

	e.step() // every new connection is due
	got := byRoom(e.f.takeCalls())
	if !slices.Equal(got["A"], []string{"a1", "a2", "a3"}) || !slices.Equal(got["B"], []string{"b1"}) || len(got) != 2 {
		t.Fatalf("first tick fetched %v", got)
	}

	e.step() // 250ms since the fetch: nothing due
	if calls := e.f.takeCalls(); len(calls) != 0 {
		t.Fatalf("fetched before any slot: %+v", calls)
	}

	e.step() // 500ms: the 500ms tier only
	got = byRoom(e.f.takeCalls())
	if !slices.Equal(got["A"], []string{"a1", "a3"}) || len(got) != 1 {
		t.Fatalf("500ms tick fetched %v", got)
	}
}

func TestNotifyPushesAdmissionAtOnce(t *testing.T) {
	e := newEnv(t, Options{}, waiting(30*time.Second), nil)
	ws := e.dialWS("r", "T", nil)
	ws.next()
	e.step() // learns the 30s tier

	e.f.setFn(admitted)
	e.hub.Notify("r", []string{"T", "elsewhere"}) // a ticket not held here is ignored
	if got := ws.next(); got != `{"admitted":"T"}` {
		t.Fatalf("got %s", got)
	}
	calls := e.f.takeCalls()
	if last := calls[len(calls)-1]; !slices.Equal(last.tickets, []string{"T"}) {
		t.Errorf("notify fetched %v", last.tickets)
	}
}

func TestNotifyFallsBackToNextTickWhenQueueFull(t *testing.T) {
	// A nil channel is never ready: every notice takes the fallback.
	e := newEnv(t, Options{}, waiting(30*time.Second), func(h *Hub) { h.notices = nil })
	ws := e.dialWS("r", "T", nil)
	ws.next()
	e.step()

	e.f.setFn(func(_, id string, n int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Interval: 30 * time.Second, Payload: []byte(fmt.Sprintf(`{"moved":%d}`, n))}
	})
	e.hub.NotifyRoom("r")
	e.step() // forced: pushed although the 30s slot is far off
	if got := ws.next(); got != `{"moved":2}` {
		t.Fatalf("got %s", got)
	}

	e.f.setFn(admitted)
	e.hub.Notify("r", []string{"T"})
	e.step()
	if got := ws.next(); got != `{"admitted":"T"}` {
		t.Fatalf("got %s", got)
	}
}

func TestFinalStateGraceThenClose(t *testing.T) {
	e := newEnv(t, Options{FinalGrace: time.Second}, admitted, nil)
	ws := e.dialWS("r", "T", nil)
	ws.next()
	e.hub.Notify("r", []string{"T"})
	if got := ws.next(); got != `{"admitted":"T"}` {
		t.Fatalf("got %s", got)
	}
	e.f.takeCalls()
	for range 4 {
		e.step()
	}
	if code := ws.closed(); code != websocket.StatusNormalClosure {
		t.Errorf("close status %v, want 1000", code)
	}
	if err := e.servedResult(); err != nil {
		t.Errorf("ServeWS: %v", err)
	}
	// Settled tickets are only kept alive every MaxSilence (10s).
	if calls := e.f.takeCalls(); len(calls) != 0 {
		t.Errorf("admitted ticket fetched during grace: %+v", calls)
	}
}

func TestCloseSendsGoingAway(t *testing.T) {
	e := newEnv(t, Options{}, waiting(time.Second), nil)
	ws1 := e.dialWS("r", "T1", nil)
	ws2 := e.dialWS("q", "T2", nil)
	sse := e.dialSSE("r", "T3")
	ws1.next()
	ws2.next()
	sse.next()

	closed := make(chan struct{})
	go func() { e.hub.Close(); close(closed) }()
	for _, ws := range []*wsClient{ws1, ws2} {
		if code := ws.closed(); code != websocket.StatusGoingAway {
			t.Errorf("close status %v, want 1001", code)
		}
	}
	sse.ended()
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("Close did not return")
	}
	for range 3 {
		if err := e.servedResult(); err != nil {
			t.Errorf("handler returned %v", err)
		}
	}
	if s := e.hub.Stats(); len(s.Connections) != 0 || s.Tickets != 0 {
		t.Errorf("stats after Close = %+v", s)
	}

	// New connections are refused so they go to another instance.
	resp, err := e.srv.Client().Get(e.srv.URL + "/sse/r/T4")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after Close: status %d", resp.StatusCode)
	}
	if err := e.servedResult(); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestACurrentFirstMessageIsNotFetchedAgain: a first message read after the
// last notice carries the ticket's state and interval; the hub fetches the
// ticket first at its tier slot, not at the next tick (which would repeat
// the read the first message came from). A notice posted since the mark,
// or a first message without a waiting state, is fetched at the next tick.
func TestACurrentFirstMessageIsNotFetchedAgain(t *testing.T) {
	const interval = 2 * time.Second
	for _, tc := range []struct {
		name        string
		state       vocab.State
		noticeSince bool
		wantSteps   int // ticks until the first fetch of T
	}{
		{"current", vocab.StateWaiting, false, int(interval / (250 * time.Millisecond))},
		{"a notice since the mark", vocab.StateWaiting, true, 1},
		{"no state", "", false, 1},
		{"admitted", vocab.StateAdmitted, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{}, waiting(interval), nil)
			mark := e.hub.NoticeMark()
			e.first = func(id string) First {
				return First{Payload: []byte(firstPayload(id)), State: tc.state, Interval: interval, Mark: mark}
			}
			if tc.noticeSince {
				e.hub.Notify("r", []string{"someone else"})
			}
			ws := e.dialWS("r", "T", nil)
			if got := ws.next(); got != firstPayload("T") {
				t.Fatalf("first = %s", got)
			}
			e.f.takeCalls()
			for n := 1; ; n++ {
				e.step()
				fetched := false
				for _, c := range e.f.takeCalls() {
					fetched = fetched || slices.Contains(c.tickets, "T")
				}
				if fetched {
					if n != tc.wantSteps {
						t.Fatalf("first fetched at tick %d, want %d", n, tc.wantSteps)
					}
					return
				}
				if n >= tc.wantSteps {
					t.Fatalf("not fetched by tick %d", n)
				}
			}
		})
	}
}
