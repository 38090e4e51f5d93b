package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// sseReadBuffer is what the reader of a held event stream reads into: the
// client has nothing to say, and anything it says is discarded.
const sseReadBuffer = 16

// sseCloseTimeout bounds writing the stream's last chunk on Close.
const sseCloseTimeout = time.Second

// sseConn is an event stream over a hijacked HTTP/1.1 connection: the hub
// holds it without the handler (its goroutine, stack, request and net/http's
// buffers), writing the chunked body itself.
type sseConn struct {
	conn net.Conn
	mu   sync.Mutex // one write at a time; Close waits for the one in flight
}

func (t *sseConn) Name() string { return "sse" }

func (t *sseConn) WriteMessage(ctx context.Context, msg []byte) error {
	return t.write(ctx, sseEvent(msg))
}

func (t *sseConn) Ping(ctx context.Context) error {
	return t.write(ctx, ssePing)
}

// write sends p as one chunk within ctx's deadline.
func (t *sseConn) write(ctx context.Context, p []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if dl, ok := ctx.Deadline(); ok {
		if err := t.conn.SetWriteDeadline(dl); err != nil {
			return fmt.Errorf("push: set sse write deadline: %w", err)
		}
	}
	b := make([]byte, 0, len(p)+16)
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	b = append(b, "\r\n"...)
	_, err := t.conn.Write(b)
	return err
}

// Close ends the body with its last chunk, so the client sees a clean end
// and reconnects, then closes the connection. A write stuck on a slow peer
// is cut short first.
func (t *sseConn) Close(websocket.StatusCode, string) error {
	_ = t.conn.SetWriteDeadline(time.Now())
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), sseCloseTimeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	if err := t.conn.SetWriteDeadline(dl); err == nil {
		_, _ = t.conn.Write([]byte("0\r\n\r\n"))
	}
	return t.conn.Close()
}

// serveSSEConn answers the request itself over the hijacked connection and
// hands it to the hub; ok is false when the connection cannot be hijacked
// (HTTP/2, HTTP/1.0), and the caller streams through the handler instead.
func (h *Hub) serveSSEConn(w http.ResponseWriter, r *http.Request, room, ticket string, first First) (ok bool, err error) {
	if r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		return false, nil
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if errors.Is(err, http.ErrNotSupported) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("push: hijack sse: %w", err)
	}
	_ = brw // a client that sends more than its request is read and ignored below
	// A peer gone without a word is found while events flow (see smallBuffers).
	setUserTimeout(conn, h.o.WriteTimeout)

	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	hd := w.Header().Clone() // the middleware's headers as well as ours
	hd.Set("Transfer-Encoding", "chunked")
	hd.Set("Connection", "close") // the connection ends with the stream
	hd.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	if err := hd.Write(&head); err != nil {
		_ = conn.Close()
		return true, fmt.Errorf("push: open sse: %w", err)
	}
	head.WriteString("\r\n")
	t := &sseConn{conn: conn}
	if err := conn.SetWriteDeadline(time.Now().Add(h.o.WriteTimeout)); err == nil {
		_, err = conn.Write(head.Bytes())
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), h.o.WriteTimeout)
		err = t.write(ctx, sseRetryField)
		cancel()
	}
	if err != nil {
		_ = conn.Close()
		return true, fmt.Errorf("push: open sse: %w", err)
	}

	c := newClient(t, room, ticket, h.o.SendQueue)
	if !h.register(c, first) {
		_ = t.Close(websocket.StatusGoingAway, reasonShutdown)
		return true, ErrClosed
	}
	go h.readSSE(conn, c, takeHold(r.Context()))
	return true, nil
}

// readSSE is a held stream's one goroutine while idle: it notices the
// client leaving.
func (h *Hub) readSSE(conn net.Conn, c *client, done func(error)) {
	var buf [sseReadBuffer]byte
	for {
		if _, err := conn.Read(buf[:]); err != nil {
			break
		}
	}
	gone := !c.kicked()
	if gone {
		_ = conn.Close()
	}
	done(h.end(c, gone))
}
