package push

import (
	"context"
	"net"
	"sync"
	"time"
)

// maxKeptGather is the largest gather buffer put back in the pool; a rare
// big message's buffer is left to the GC.
const maxKeptGather = 16 << 10

var gatherPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// wsWire is the connection under a WebSocket's small write buffer. Between
// gather and send it keeps what the buffer writes (one message's frame
// header and payload, and any control frame the reader answers meanwhile)
// in a pooled buffer, and send writes it all at once; otherwise it writes
// through. A connection holds no buffer while idle.
type wsWire struct {
	net.Conn
	mu  sync.Mutex // one write at a time; guards buf
	buf *[]byte    // non-nil while gathering
}

func (w *wsWire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf != nil {
		*w.buf = append(*w.buf, p...)
		return len(p), nil
	}
	return w.Conn.Write(p)
}

// gather starts keeping writes for send.
func (w *wsWire) gather() {
	b := gatherPool.Get().(*[]byte)
	w.mu.Lock()
	w.buf = b
	w.mu.Unlock()
}

// send writes what was gathered in one write within ctx's deadline. A
// write that fails or times out closes the connection: part of a frame may
// be out, and nothing more can follow it.
func (w *wsWire) send(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf
	if b == nil {
		return nil
	}
	w.buf = nil
	defer func() {
		if cap(*b) <= maxKeptGather {
			*b = (*b)[:0]
			gatherPool.Put(b)
		}
	}()
	if len(*b) == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok {
		if err := w.Conn.SetWriteDeadline(dl); err != nil {
			_ = w.Conn.Close()
			return err
		}
		// Lifted after: the reader's control frames write through later.
		defer w.Conn.SetWriteDeadline(time.Time{})
	}
	if _, err := w.Conn.Write(*b); err != nil {
		_ = w.Conn.Close()
		return err
	}
	return nil
}
