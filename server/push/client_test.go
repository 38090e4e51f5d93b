package push

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestSlowClientIsDroppedWithoutBlockingOthers(t *testing.T) {
	e := newEnv(t, Options{SendQueue: 1, WriteTimeout: time.Minute}, func(_, id string, n int, _ time.Time) Update {
		return Update{State: StateWaiting, Payload: []byte(fmt.Sprintf(`{"ticket":%q,"n":%d}`, id, n))}
	}, nil)

	slow := newBlockingTransport()
	served := make(chan error, 1)
	go func() { served <- e.hub.serve(context.Background(), slow, "r", "slow", []byte(firstPayload("slow"))) }()
	select {
	case <-slow.writing: // the writer is now stuck on the first message
	case <-time.After(wait):
		t.Fatal("slow client never written to")
	}
	fast := e.dialWS("r", "fast", nil)
	fast.next()

	e.step() // fills the slow queue (1)
	if got, want := fast.next(), `{"ticket":"fast","n":1}`; got != want {
		t.Fatalf("fast got %s, want %s", got, want)
	}
	e.step() // overflows it
	if got, want := fast.next(), `{"ticket":"fast","n":2}`; got != want {
		t.Fatalf("fast got %s, want %s", got, want)
	}

	select {
	case code := <-slow.code:
		if code != websocket.StatusTryAgainLater {
			t.Errorf("slow closed with %v, want 1013", code)
		}
	case <-time.After(wait):
		t.Fatal("slow client not closed")
	}
	select {
	case err := <-served:
		if !errors.Is(err, ErrSlow) {
			t.Errorf("serve returned %v, want ErrSlow", err)
		}
	case <-time.After(wait):
		t.Fatal("serve did not return")
	}
	if s := e.hub.Stats(); s.SlowDisconnects != 1 || s.Connections["fake"] != 0 || s.Connections["ws"] != 1 {
		t.Errorf("stats = %+v", s)
	}

	e.step()
	if got, want := fast.next(), `{"ticket":"fast","n":3}`; got != want {
		t.Fatalf("fast got %s, want %s", got, want)
	}
}
