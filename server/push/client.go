package push

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// client is one open connection. Its own goroutine (the HTTP handler's)
// drains queue into the transport, so a slow socket never holds up the hub.
type client struct {
	tr     Transport
	room   string
	ticket string
	queue  chan []byte

	once   sync.Once
	done   chan struct{} // closed by kick: stop writing
	closed chan struct{} // closed when the transport's Close returned
	err    error         // why it was kicked; read only after done

	// Guarded by Hub.mu.
	lastSent   []byte
	lastSentAt time.Time
	finalAt    time.Time // when a final state was queued; zero while waiting
}

func newClient(tr Transport, room, ticket string, queue int) *client {
	return &client{
		tr:     tr,
		room:   room,
		ticket: ticket,
		queue:  make(chan []byte, queue),
		done:   make(chan struct{}),
		closed: make(chan struct{}),
	}
}

// kick asks the client to go away. It never blocks, so the hub may call it
// under its lock; the transport is closed in the background because a
// WebSocket close handshake waits for the peer. It reports whether this call
// was the one that kicked.
func (c *client) kick(code websocket.StatusCode, reason string, err error) bool {
	kicked := false
	c.once.Do(func() {
		kicked = true
		c.err = err
		close(c.done)
		go func() {
			defer close(c.closed)
			_ = c.tr.Close(code, reason)
		}()
	})
	return kicked
}

func (c *client) kicked() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// run writes queued messages and keep-alives until the peer goes (ctx ends)
// or the client is kicked.
func (c *client) run(ctx context.Context, h *Hub) error {
	ping := h.clock.NewTicker(h.o.PingInterval)
	defer ping.Stop()
	for {
		// A kicked client must not write more; check before the select,
		// which picks at random among ready cases.
		if c.kicked() {
			<-c.closed
			return c.err
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			// Our own Close also ends ctx; report the kick, not the peer.
			if c.kicked() {
				continue
			}
			return nil
		case msg := <-c.queue:
			wctx, cancel := context.WithTimeout(ctx, h.o.WriteTimeout)
			err := c.tr.WriteMessage(wctx, msg)
			cancel()
			if err != nil {
				return c.failed(ctx, fmt.Errorf("push: write %s: %w", c.tr.Name(), err))
			}
			h.sent.Add(1)
		case <-ping.Chan():
			pctx, cancel := context.WithTimeout(ctx, h.o.WriteTimeout)
			err := c.tr.Ping(pctx)
			cancel()
			if err != nil {
				return c.failed(ctx, fmt.Errorf("push: ping %s: %w", c.tr.Name(), err))
			}
		}
	}
}

// failed reports why a write failed: when the client was kicked meanwhile,
// closing the transport is what broke the write, and a peer that left
// mid-write is a normal end. A write that timed out stays an error.
func (c *client) failed(ctx context.Context, err error) error {
	if c.kicked() {
		<-c.closed
		return c.err
	}
	if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}
