package push

import (
	"context"
	"fmt"
	"net/http"

	"github.com/coder/websocket"
)

// wsReadLimit is small: clients send nothing but control frames.
const wsReadLimit = 512

type wsTransport struct {
	conn *websocket.Conn
}

func (t *wsTransport) Name() string { return "ws" }

func (t *wsTransport) WriteMessage(ctx context.Context, msg []byte) error {
	return t.conn.Write(ctx, websocket.MessageText, msg)
}

// Ping waits for the pong, which wsReadLoop's reader processes.
func (t *wsTransport) Ping(ctx context.Context) error {
	return t.conn.Ping(ctx)
}

func (t *wsTransport) Close(code websocket.StatusCode, reason string) error {
	return t.conn.Close(code, reason)
}

// ServeWS upgrades the request, sends first at once, then the ticket's
// updates until the client leaves, the ticket settles and its grace ends, or
// the hub closes. Origin checks are the caller's job, through
// Options.WSAccept. It returns nil when the connection ended normally.
func (h *Hub) ServeWS(w http.ResponseWriter, r *http.Request, room, ticket string, first []byte) error {
	if h.isClosed() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return ErrClosed
	}
	conn, err := websocket.Accept(w, r, h.o.WSAccept)
	if err != nil {
		return fmt.Errorf("push: accept websocket: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(wsReadLimit)
	ctx := wsReadLoop(r.Context(), conn)
	return h.serve(ctx, &wsTransport{conn: conn}, room, ticket, first)
}

// wsReadLoop reads so that pings and close frames are answered; the
// returned ctx ends when the peer goes. A data message closes the connection
// with 1008, one over wsReadLimit with 1009. It stands in for conn.CloseRead,
// whose goroutine calls Close and then waits 15s for itself to exit
// (coder/websocket#429).
func wsReadLoop(ctx context.Context, conn *websocket.Conn) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		if _, _, err := conn.Read(ctx); err == nil {
			_ = conn.Close(websocket.StatusPolicyViolation, "unexpected data message")
		}
	}()
	return ctx
}

// serve runs one connection of any transport.
func (h *Hub) serve(ctx context.Context, tr Transport, room, ticket string, first []byte) error {
	c := newClient(tr, room, ticket, h.o.SendQueue)
	if !h.register(c, first) {
		_ = tr.Close(websocket.StatusGoingAway, reasonShutdown)
		return ErrClosed
	}
	defer h.unregister(c)
	return c.run(ctx, h)
}
