package push

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// maxKeptFrame is the largest frame buffer put back in the pool; a rare big
// message's buffer is left to the GC.
const maxKeptFrame = 16 << 10

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// opClose is the WebSocket close frame's opcode (RFC 6455, 5.2).
const opClose = 0x8

// errClosing: a close frame went out, and no message may follow it.
var errClosing = errors.New("push: websocket closing")

// wsWire is the connection under a WebSocket. The hub writes each message
// as one whole frame in one write call (header and payload together: one
// TCP segment, one wake-up of the peer), and, from its own goroutine,
// without waiting (tryWrite): the part a full socket did not take stays
// pending for a writer goroutine to finish. coder/websocket writes only
// control frames (pongs, close), each in one call through the connection's
// small write buffer; a pending frame is finished before them.
type wsWire struct {
	net.Conn
	raw syscall.RawConn // nil: no write without waiting

	mu      sync.Mutex // one write at a time; guards what follows
	pending []byte     // the unwritten rest of the frame tryWrite started
	closing bool       // a close frame went out
}

func newWire(conn net.Conn) *wsWire {
	w := &wsWire{Conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			w.raw = raw
		}
	}
	return w
}

// Write is coder/websocket's: one control frame per call (at most 127
// bytes, within its 128 B buffer). Its own context bounds the write: on
// timeout it closes the connection.
func (w *wsWire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.finishLocked(); err != nil {
		return 0, err
	}
	if len(p) > 0 && p[0]&0x0f == opClose {
		w.closing = true
	}
	return w.Conn.Write(p)
}

// appendFrame appends msg as one unmasked final text frame.
func appendFrame(b, msg []byte) []byte {
	switch n := len(msg); {
	case n < 126:
		b = append(b, 0x81, byte(n))
	case n <= 0xffff:
		b = append(b, 0x81, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x81, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, msg...)
}

// writeMessage writes msg as a frame, waiting for the socket until
// timeout. A write that fails or times out closes the connection: part of
// a frame may be out, and nothing can follow it.
func (w *wsWire) writeMessage(msg []byte, timeout time.Duration) error {
	b := framePool.Get().(*[]byte)
	defer putFrame(b)
	*b = appendFrame((*b)[:0], msg)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return errClosing
	}
	if err := w.Conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		_ = w.Conn.Close()
		return err
	}
	// Lifted after: coder/websocket's control frames follow their own timeouts.
	defer w.Conn.SetWriteDeadline(time.Time{})
	if err := w.finishLocked(); err != nil {
		return err
	}
	if _, err := w.Conn.Write(*b); err != nil {
		_ = w.Conn.Close()
		return err
	}
	return nil
}

// tryWrite starts writing msg as a frame if that needs no wait: started is
// false (nothing written) while a frame is pending or when the connection
// cannot write without waiting; done is false when part of the frame is
// pending, for finish.
func (w *wsWire) tryWrite(msg []byte) (started, done bool, err error) {
	if w.raw == nil {
		return false, false, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return false, false, errClosing
	}
	if w.pending != nil {
		return false, false, nil
	}
	b := framePool.Get().(*[]byte)
	defer putFrame(b)
	*b = appendFrame((*b)[:0], msg)
	n, err := w.writeNow(*b)
	if err != nil {
		_ = w.Conn.Close()
		return true, false, err
	}
	if n < len(*b) {
		w.pending = append([]byte(nil), (*b)[n:]...)
		return true, false, nil
	}
	return true, true, nil
}

// writeNow writes what the socket takes at once.
func (w *wsWire) writeNow(p []byte) (int, error) {
	var n int
	var werr error
	err := w.raw.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, err := syscall.Write(int(fd), p[n:])
			if m > 0 {
				n += m
			}
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.EAGAIN {
				break
			}
			if err != nil {
				werr = err
				break
			}
		}
		return true // never wait here
	})
	if err == nil {
		err = werr
	}
	return n, err
}

// finish writes what tryWrite left pending, waiting for the socket until
// timeout.
func (w *wsWire) finish(timeout time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		return nil
	}
	if err := w.Conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		_ = w.Conn.Close()
		return err
	}
	defer w.Conn.SetWriteDeadline(time.Time{})
	return w.finishLocked()
}

func (w *wsWire) finishLocked() error {
	if w.pending == nil {
		return nil
	}
	p := w.pending
	w.pending = nil
	if _, err := w.Conn.Write(p); err != nil {
		_ = w.Conn.Close()
		return err
	}
	return nil
}

func putFrame(b *[]byte) {
	if cap(*b) <= maxKeptFrame {
		*b = (*b)[:0]
		framePool.Put(b)
	}
}
