package push

import (
	"context"

	"github.com/coder/websocket"
)

// Transport is one client connection as the hub sees it. The client's writer
// goroutine is the only caller of WriteMessage and Ping; Close may be called
// from any goroutine, at most once.
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
