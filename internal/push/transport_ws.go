package push

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// wsReadLimit is small: clients send nothing but control frames.
const wsReadLimit = 512

// wsBuffer sizes the bufio reader and writer a WebSocket keeps for its
// life, in place of net/http's 4 KB each. Clients send only control frames
// (at most 131 bytes); a bigger message is written past the buffer.
const wsBuffer = 128

type wsTransport struct {
	conn *websocket.Conn
	wire *wsWire // nil when the connection was not hijacked through smallBuffers
}

func (t *wsTransport) Name() string { return "ws" }

// WriteMessage writes msg as one frame in one write (wsWire), within
// ctx's deadline.
func (t *wsTransport) WriteMessage(ctx context.Context, msg []byte) error {
	if t.wire == nil {
		return t.conn.Write(ctx, websocket.MessageText, msg)
	}
	timeout := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	return t.wire.writeMessage(msg, timeout)
}

// TryWrite starts writing msg if that needs no wait (inlineWriter).
func (t *wsTransport) TryWrite(msg []byte) (started, done bool, err error) {
	if t.wire == nil {
		return false, false, nil
	}
	return t.wire.tryWrite(msg)
}

// Finish writes the rest of a message TryWrite started (inlineWriter).
func (t *wsTransport) Finish(timeout time.Duration) error {
	if t.wire == nil {
		return nil
	}
	return t.wire.finish(timeout)
}

// Ping waits for the pong, which the connection's reader processes.
func (t *wsTransport) Ping(ctx context.Context) error {
	return t.conn.Ping(ctx)
}

func (t *wsTransport) Close(code websocket.StatusCode, reason string) error {
	return t.conn.Close(code, reason)
}

// ServeWS upgrades the request, hands the connection to the hub and
// returns: first is sent at once, then the ticket's updates until the
// client leaves, the ticket settles and its grace ends, or the hub closes.
// The handler's goroutine and request are not kept; a Hold on the request
// learns when the connection ends. Origin checks are the caller's job,
// through Options.WSAccept.
func (h *Hub) ServeWS(w http.ResponseWriter, r *http.Request, room, ticket string, first First) error {
	if h.isClosed() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return ErrClosed
	}
	sb := &smallBuffers{ResponseWriter: w, userTimeout: h.o.WriteTimeout}
	conn, err := websocket.Accept(sb, r, h.o.WSAccept)
	if err != nil {
		return fmt.Errorf("push: accept websocket: %w", err)
	}
	conn.SetReadLimit(wsReadLimit)
	c := newClient(&wsTransport{conn: conn, wire: sb.wire}, room, ticket, h.o.SendQueue)
	if !h.register(c, first) {
		_ = conn.Close(websocket.StatusGoingAway, reasonShutdown)
		return ErrClosed
	}
	go h.readWS(conn, c, takeHold(r.Context()))
	return nil
}

// readWS is the connection's one goroutine while idle: it reads so that
// pings and close frames are answered, and ends the client when the peer
// goes. A data message closes the connection with 1008, one over
// wsReadLimit with 1009. A background context costs the reads no timer.
// (conn.CloseRead would do, but its goroutine calls Close and then waits
// 15s for itself to exit: coder/websocket#429.)
func (h *Hub) readWS(conn *websocket.Conn, c *client, done func(error)) {
	_, _, err := conn.Read(context.Background())
	if err == nil {
		_ = conn.Close(websocket.StatusPolicyViolation, "unexpected data message")
	}
	_ = conn.CloseNow()
	done(h.end(c, !c.kicked()))
}

// smallBuffers hands coder/websocket the hijacked connection with small
// bufio buffers: net/http's own 4 KB reader and writer would otherwise stay
// with every socket for its life. The writer writes to wire (which the hub
// writes its messages to itself). With userTimeout set, a TCP connection
// whose written data goes unacknowledged that long is dropped by the kernel
// (Linux), so a peer gone without a word is found while messages flow,
// without keep-alives.
type smallBuffers struct {
	http.ResponseWriter
	userTimeout time.Duration
	wire        *wsWire // set by Hijack
}

func (w *smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if w.userTimeout > 0 {
		setUserTimeout(conn, w.userTimeout)
	}
	// net/http flushed the 101 before handing over its writer; its reader
	// may hold the first bytes the client sent after the handshake.
	var rd io.Reader = conn
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ := brw.Reader.Peek(n)
		rd = io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn)
	}
	w.wire = newWire(conn)
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(rd, wsBuffer), bufio.NewWriterSize(w.wire, wsBuffer)), nil
}
