package server

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Refusing a connection over the cap: the refused client gets a real answer
// (it may be a browser that then falls back or retries), but refusals are
// themselves bounded so that a flood cannot make them the new cost.
const (
	refuseReadTimeout = time.Second // to read the request before answering it
	refuseParallel    = 64          // refusals answered at once; beyond, the connection is just closed
	refuseLogEvery    = 10 * time.Second
)

// refusedAnswer is the whole HTTP answer to a connection over the cap.
var refusedAnswer = func() []byte {
	body := `{"error":{"code":"over_capacity","message":"the server holds as many connections as it may; retry shortly"}}`
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 2\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// LimitListener caps the connections open at once at max (max <= 0: no
// cap). A connection over the cap is answered 503 with Retry-After and the
// JSON error, then closed, and the refusals are logged every 10 s. Unlike
// netutil.LimitListener it never stops accepting, so refused clients learn
// at once instead of waiting in the kernel's backlog.
func LimitListener(l net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return l
	}
	if log == nil {
		log = slog.Default()
	}
	return &limitListener{Listener: l, max: int64(max), log: log, sem: make(chan struct{}, refuseParallel)}
}

type limitListener struct {
	net.Listener
	max  int64
	log  *slog.Logger
	open atomic.Int64
	sem  chan struct{} // refusals being answered

	mu      sync.Mutex
	refused int64 // since the last log line
	logged  time.Time
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &countedConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		l.refuse(c)
	}
}

// refuse answers c without holding up Accept.
func (l *limitListener) refuse(c net.Conn) {
	l.mu.Lock()
	l.refused++
	if now := time.Now(); now.Sub(l.logged) >= refuseLogEvery {
		l.log.Warn("connections refused: the server is at --max-conns", "max_conns", l.max, "refused", l.refused)
		l.logged, l.refused = now, 0
	}
	l.mu.Unlock()
	select {
	case l.sem <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	go func() {
		defer func() { <-l.sem }()
		defer c.Close()
		// Read the request first: a client still writing it may miss an
		// answer that came before it was done.
		_ = c.SetDeadline(time.Now().Add(refuseReadTimeout))
		if _, err := http.ReadRequest(bufio.NewReader(io.LimitReader(c, 16<<10))); err != nil {
			return
		}
		if _, err := c.Write(refusedAnswer); err != nil {
			return
		}
		// Half-close and drain what the client still sends, so the close
		// does not reset the connection before the answer is read.
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// countedConn gives its place back once, however often it is closed.
type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
