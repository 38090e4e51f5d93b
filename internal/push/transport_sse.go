package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// sseRetry is the reconnect delay hinted to EventSource.
const sseRetry = 2 * time.Second

type sseTransport struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (t *sseTransport) Name() string { return "sse" }

func (t *sseTransport) WriteMessage(ctx context.Context, msg []byte) error {
	return t.write(ctx, sseEvent(msg))
}

// Ping writes a comment, which EventSource ignores but proxies see as traffic.
func (t *sseTransport) Ping(ctx context.Context) error {
	return t.write(ctx, ssePing)
}

// sseEvent frames msg as one event. A newline in msg would end the data
// field, so each line gets its own.
func sseEvent(msg []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(msg) + 16)
	for line := range bytes.SplitSeq(msg, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// ssePing is a comment: EventSource ignores it, proxies see traffic.
var ssePing = []byte(": ping\n\n")

// sseRetryField opens every stream with the reconnect delay.
var sseRetryField = []byte("retry: " + strconv.FormatInt(sseRetry.Milliseconds(), 10) + "\n\n")

// Close has nothing to send: the stream ends when the handler returns,
// which the writer goroutine does once kicked.
func (t *sseTransport) Close(websocket.StatusCode, string) error { return nil }

// write bounds one write with ctx's deadline, then lifts it: a long stream
// must not die of the server's WriteTimeout.
func (t *sseTransport) write(ctx context.Context, p []byte) error {
	if dl, ok := ctx.Deadline(); ok {
		if err := t.rc.SetWriteDeadline(dl); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return fmt.Errorf("push: set sse write deadline: %w", err)
		}
		defer t.rc.SetWriteDeadline(time.Time{})
	}
	if _, err := t.w.Write(p); err != nil {
		return err
	}
	return t.rc.Flush()
}

// ServeSSE streams first and then the ticket's updates as Server-Sent
// Events, until the request ends, the ticket settles and its grace ends, or
// the hub closes. Over HTTP/1.1 the hub holds the hijacked connection and
// ServeSSE returns at once, as ServeWS does (a Hold learns of the end);
// otherwise (HTTP/2) it streams through the handler and returns nil when
// the stream ended normally.
func (h *Hub) ServeSSE(w http.ResponseWriter, r *http.Request, room, ticket string, first First) error {
	if _, ok := w.(http.Flusher); !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return errors.New("push: serve sse: response writer cannot flush")
	}
	if h.isClosed() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return ErrClosed
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no") // nginx would otherwise buffer the stream
	if held, err := h.serveSSEConn(w, r, room, ticket, first); held {
		return err
	}
	w.WriteHeader(http.StatusOK)

	t := &sseTransport{w: w, rc: http.NewResponseController(w)}
	ctx, cancel := context.WithTimeout(r.Context(), h.o.WriteTimeout)
	err := t.write(ctx, sseRetryField)
	cancel()
	if err != nil {
		return fmt.Errorf("push: open sse: %w", err)
	}
	return h.serve(r.Context(), t, room, ticket, first)
}
