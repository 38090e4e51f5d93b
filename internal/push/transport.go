package push

import (
	"context"

	"github.com/coder/websocket"
)

// Transport is one client connection as the hub sees it. One writer at a
// time (the client's drain goroutine) calls WriteMessage and Ping; Close may
// be called from any goroutine, at most once, even during a write.
type Transport interface {
	// Name is "ws" or "sse"; Stats counts connections by it.
	Name() string
	// WriteMessage sends one ticket JSON; ctx carries the per-write deadline.
	WriteMessage(ctx context.Context, msg []byte) error
	// Ping keeps the connection alive through proxies and detects dead peers.
	Ping(ctx context.Context) error
	// Close ends the connection. SSE has no status codes and ignores them.
	Close(code websocket.StatusCode, reason string) error
}

// Close reasons; a WebSocket close reason must stay under 125 bytes.
const (
	reasonShutdown = "server going away"
	reasonSlow     = "too slow to keep up"
	reasonDone     = "ticket settled"
)

// serve runs a connection whose watcher is the caller: it returns once ctx
// ends (the peer went) or the client was kicked, and says why.
func (h *Hub) serve(ctx context.Context, tr Transport, room, ticket string, first First) error {
	c := newClient(tr, room, ticket, h.o.SendQueue)
	if !h.register(c, first) {
		_ = tr.Close(websocket.StatusGoingAway, reasonShutdown)
		return ErrClosed
	}
	select {
	case <-ctx.Done():
	case <-c.done:
	}
	return h.end(c, !c.kicked())
}
