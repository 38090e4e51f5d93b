package push

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// client is one open connection. It has no goroutine of its own while idle:
// whoever watches the peer (the WebSocket's reader, the SSE handler) ends
// it, and a writer goroutine runs only while its queue holds something, so
// a slow socket never holds up the hub or another connection.
type client struct {
	tr     Transport
	inline inlineWriter // tr, when it can write without waiting; else nil
	room   string
	ticket string
	queue  chan []byte
	carry  []byte // a message taken from queue for the writer goroutine to write first; owned by whoever holds writing

	writing atomic.Bool // a writer goroutine is draining queue
	pingDue atomic.Bool // the hub asked for a keep-alive
	wmu     sync.Mutex  // held across each write, so the end can wait one out

	once   sync.Once
	done   chan struct{} // closed by kick or end: stop writing
	closed chan struct{} // closed when the transport's Close returned
	err    error         // why it was kicked; read only after done

	// Guarded by Hub.mu.
	lastSent   []byte
	lastSentAt time.Time
	finalAt    time.Time // when a final state was queued; zero while waiting
	pingAt     time.Time // the next keep-alive is due then
}

// inlineWriter is a transport the hub can write to from its own goroutine
// without waiting (a WebSocket on a TCP connection, transport_ws.go).
type inlineWriter interface {
	// TryWrite starts writing msg if that needs no wait. It reports
	// whether it started (nothing is written otherwise) and whether it is
	// done; the rest of a message not done is written by Finish.
	TryWrite(msg []byte) (started, done bool, err error)
	// Finish writes the rest of a started message, waiting up to timeout.
	Finish(timeout time.Duration) error
}

func newClient(tr Transport, room, ticket string, queue int) *client {
	iw, _ := tr.(inlineWriter)
	return &client{
		tr:     tr,
		inline: iw,
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

// wake makes sure a writer drains the queue. The hub calls it under its
// lock, after queueing; it never blocks.
func (c *client) wake(h *Hub) {
	if c.writing.CompareAndSwap(false, true) {
		go c.drain(h)
	}
}

// drain writes until nothing is left, then exits. A message queued after
// the last look but before writing was cleared is caught by the re-check.
// A kicked client writes nothing more: what is left in its queue (or a
// keep-alive asked for) stays unwritten, and the writer exits rather than
// look at it again and again.
func (c *client) drain(h *Hub) {
	for {
		c.flush(h)
		c.writing.Store(false)
		if c.kicked() || len(c.queue) == 0 && !c.pingDue.Load() || !c.writing.CompareAndSwap(false, true) {
			return
		}
	}
}

// writeInline writes c's queued messages from the calling goroutine (the
// hub's), as far as the socket takes them without waiting; a writer
// goroutine takes over the rest. A message a goroutine per message would
// have written costs no goroutine, context or timer this way.
func (c *client) writeInline(h *Hub) {
	if !c.writing.CompareAndSwap(false, true) {
		return // a writer runs: it takes what was queued
	}
	c.wmu.Lock()
	for !c.kicked() {
		var msg []byte
		select {
		case msg = <-c.queue:
		default:
		}
		if msg == nil {
			break
		}
		started, done, err := c.inline.TryWrite(msg)
		if err != nil {
			c.wmu.Unlock()
			c.kick(websocket.StatusInternalError, "", fmt.Errorf("push: write %s: %w", c.tr.Name(), err))
			c.writing.Store(false)
			return
		}
		if started {
			h.sent.Add(1)
		} else {
			c.carry = msg
		}
		if !done {
			// The socket is full, or a frame is still pending: a writer
			// goroutine waits for it (and writes carry first).
			c.wmu.Unlock()
			go c.drain(h)
			return
		}
	}
	c.wmu.Unlock()
	c.writing.Store(false)
	// Queued after the last look (a parallel fetch), or a keep-alive asked for.
	if !c.kicked() && (len(c.queue) > 0 || c.pingDue.Load()) {
		c.wake(h)
	}
}

// flush writes what a started message left pending, a carried message,
// queued messages, then a due keep-alive, each within WriteTimeout. A
// failed write ends the connection.
func (c *client) flush(h *Hub) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.inline != nil && !c.kicked() {
		if err := c.inline.Finish(h.o.WriteTimeout); err != nil {
			c.kick(websocket.StatusInternalError, "", fmt.Errorf("push: write %s: %w", c.tr.Name(), err))
			return
		}
	}
	for {
		// A kicked client must not write more.
		if c.kicked() {
			return
		}
		var err error
		ctx, cancel := context.WithTimeout(context.Background(), h.o.WriteTimeout)
		carried := c.carry
		c.carry = nil
		if carried == nil {
			select {
			case carried = <-c.queue:
			default:
			}
		}
		switch msg := carried; {
		case msg != nil:
			if err = c.tr.WriteMessage(ctx, msg); err != nil {
				err = fmt.Errorf("push: write %s: %w", c.tr.Name(), err)
			} else {
				h.sent.Add(1)
			}
		default:
			if c.pingDue.CompareAndSwap(true, false) {
				if err = c.tr.Ping(ctx); err != nil {
					err = fmt.Errorf("push: ping %s: %w", c.tr.Name(), err)
				}
			} else {
				cancel()
				return
			}
		}
		cancel()
		if err != nil {
			// The connection is broken (a WebSocket closes itself on any
			// error); a peer that left meanwhile is reported by its watcher.
			c.kick(websocket.StatusInternalError, "", err)
			return
		}
	}
}

// end is called once by the connection's watcher when the peer went (gone)
// or the client was kicked: it waits out a write in flight and the
// transport's close, unregisters, and says why it ended (nil: the peer left,
// or the ticket settled and its grace ended).
func (h *Hub) end(c *client, gone bool) error {
	c.once.Do(func() { // the peer went: nothing to close
		close(c.done)
		close(c.closed)
	})
	c.wmu.Lock()
	//lint:ignore SA2001 an empty section: wait for the write in flight
	c.wmu.Unlock()
	<-c.closed
	h.unregister(c)
	// A write broken by the peer leaving is a normal end; one that timed
	// out, or a kick for slowness, is not.
	if gone && c.err != nil && !errors.Is(c.err, ErrSlow) && !errors.Is(c.err, context.DeadlineExceeded) {
		return nil
	}
	return c.err
}
