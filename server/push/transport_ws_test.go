package push

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestWSPing(t *testing.T) {
	e := newEnv(t, Options{PingInterval: 5 * time.Second}, waiting(time.Second), nil)
	pinged := make(chan struct{}, 1)
	ws := e.dialWS("r", "T", &websocket.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool {
			select {
			case pinged <- struct{}{}:
			default:
			}
			return true
		},
	})
	ws.next() // written by the client's goroutine, after its ping ticker started

	e.clock.Advance(5 * time.Second)
	select {
	case <-pinged:
	case <-time.After(wait):
		t.Fatal("no ping")
	}
	// The pong came back: the connection is still served.
	e.f.setFn(admitted)
	e.hub.Notify("r", []string{"T"})
	if got := ws.next(); got != `{"admitted":"T"}` {
		t.Fatalf("got %s", got)
	}
}

func TestWSClientMessagesCloseConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		want websocket.StatusCode
	}{
		{"small", 8, websocket.StatusPolicyViolation},
		{"over read limit", 4 * wsReadLimit, websocket.StatusMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{}, waiting(time.Second), nil)
			ws := e.dialWS("r", "T", nil)
			ws.next()

			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if err := ws.conn.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", tc.size))); err != nil {
				t.Fatal(err)
			}
			if code := ws.closed(); code != tc.want {
				t.Errorf("close status %v, want %v", code, tc.want)
			}
			if err := e.servedResult(); err != nil {
				t.Errorf("ServeWS: %v", err)
			}
			if s := e.hub.Stats(); s.Connections["ws"] != 0 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}
