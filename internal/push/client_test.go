package push

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/waitroom/waitroom/internal/vocab"
)

func TestSlowClientIsDroppedWithoutBlockingOthers(t *testing.T) {
	e := newEnv(t, Options{SendQueue: 1, WriteTimeout: time.Minute}, func(_, id string, n int, _ time.Time) Update {
		return Update{State: vocab.StateWaiting, Payload: []byte(fmt.Sprintf(`{"ticket":%q,"n":%d}`, id, n))}
	}, nil)

	slow := newBlockingTransport()
	served := make(chan error, 1)
	go func() {
		served <- e.hub.serve(context.Background(), slow, "r", "slow", First{Payload: []byte(firstPayload("slow"))})
	}()
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

// TestSlowWebSocketReaderIsDroppedWithoutBlockingOthers: a real socket
// whose peer stopped reading blocks only its own writer; its queue fills,
// it is dropped, and a reading neighbour gets every update on time.
func TestSlowWebSocketReaderIsDroppedWithoutBlockingOthers(t *testing.T) {
	big := strings.Repeat("x", 1<<20) // a few of these fill loopback's socket buffers
	e := newEnv(t, Options{SendQueue: 1, WriteTimeout: time.Minute}, func(_, id string, n int, _ time.Time) Update {
		if id == "slow" {
			return Update{State: vocab.StateWaiting, Payload: []byte(fmt.Sprintf(`{"n":%d,"pad":%q}`, n, big))}
		}
		return Update{State: vocab.StateWaiting, Payload: []byte(fmt.Sprintf(`{"ticket":%q,"n":%d}`, id, n))}
	}, nil)
	slow, err := rawOpen(e.srv.Listener.Addr().String(), "ws", "r/slow") // never reads
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast := e.dialWS("r", "fast", nil)
	fast.next()
	// rawOpen returns once the 101 is read, which the server writes before
	// the hub takes the socket: a tick before then would not write to it,
	// and the loop below would never fill its buffers.
	deadline := time.Now().Add(wait)
	for e.hub.Stats().Connections["ws"] != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the hub never held both sockets: %+v", e.hub.Stats())
		}
		time.Sleep(time.Millisecond)
	}

	for n := 1; e.hub.Stats().SlowDisconnects == 0; n++ {
		if n > 64 {
			t.Fatalf("the slow socket was never dropped: %+v", e.hub.Stats())
		}
		e.step()
		if got, want := fast.next(), fmt.Sprintf(`{"ticket":"fast","n":%d}`, n); got != want {
			t.Fatalf("fast got %s, want %s", got, want)
		}
	}
	e.step()
	if got := fast.next(); !strings.HasPrefix(got, `{"ticket":"fast"`) {
		t.Fatalf("fast after the drop: %s", got)
	}
}

// TestWriterOfAKickedClientExits: a connection that ended with a message
// still queued (the peer left right after an update was queued) or a
// keep-alive asked for must not keep a writer goroutine: before the fix,
// drain found the queue non-empty after each flush that refused to write,
// and spun on a core for as long as the process ran.
func TestWriterOfAKickedClientExits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queued bool
		ping   bool
	}{{"message queued", true, false}, {"keep-alive due", false, true}, {"both", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHub(idleFetcher{}, Options{})
			tr := newBlockingTransport()
			c := newClient(tr, "r", "t", 4)
			c.kick(websocket.StatusNormalClosure, "", nil)
			if tc.queued {
				c.queue <- []byte("left over")
			}
			if tc.ping {
				c.pingDue.Store(true)
			}
			done := make(chan struct{})
			c.writing.Store(true) // as wake does before starting drain
			go func() {
				defer close(done)
				c.drain(h)
			}()
			select {
			case <-done:
			case <-time.After(wait):
				t.Fatal("the writer of a kicked client did not exit")
			}
			select {
			case msg := <-tr.writing:
				t.Errorf("a kicked client wrote %q", msg)
			default:
			}
			if c.writing.Load() {
				t.Error("writing still set after the writer exited")
			}
		})
	}
}
