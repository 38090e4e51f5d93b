package server

import (
	"bufio"
	"container/list"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/clientip"
)

// Refusing a connection over a cap: the refused client gets a real answer
// (it may be a browser that then falls back or retries), but refusals are
// themselves bounded so that a flood cannot make them the new cost.
const (
	refuseReadTimeout  = 500 * time.Millisecond // to read the request before answering it
	refuseWriteTimeout = 500 * time.Millisecond // to write the answer and see the client go
	refuseParallel     = 128                    // refusals answered at once; beyond, see refuse
	refusePerClient    = 8                      // of which one client address may take
	refuseLogEvery     = 10 * time.Second
)

// Under pressure a connection going idle is kept only PressureIdle: when
// the server holds more than half of Max, or its client address more than
// half of PerClient.
const (
	PressureIdle     = time.Second
	pressureSweepGap = time.Second // at most one sweep of the idle connections a second
)

// DefaultIdleTimeout is how long a kept-alive connection may wait for its
// next request when nothing presses.
const DefaultIdleTimeout = 15 * time.Second

// DefaultSilentGrace: a browser sends its request within milliseconds of
// connecting (TLS handshake included); a connection silent for a second is
// a slow or idle client, and at a cap it goes before anyone is refused.
const DefaultSilentGrace = time.Second

// DefaultConnsPerClient is the per-address connection cap's default: a
// large NAT's hundreds of browsers, a few connections each, and more once
// the idle ones go first.
const DefaultConnsPerClient = 1000

// refusal is the whole HTTP answer to a connection over a cap.
func refusal(code, message string) []byte {
	body := `{"error":{"code":"` + code + `","message":"` + message + `"}}`
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 2\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

var (
	refusedServer = refusal("over_capacity", "the server holds as many connections as it may; retry shortly")
	refusedClient = refusal("too_many_connections", "your address holds as many connections as one address may; close some or retry shortly")
)

// ConnLimits bound the connections the server holds; zero values are no cap.
type ConnLimits struct {
	// Max caps the connections open at once.
	Max int
	// PerClient caps them per peer address (IPv6 per /64). Peers in Trusted
	// are exempt: a proxy carries many clients over its connections, so
	// capping it would cap them all together.
	PerClient int
	Trusted   []netip.Prefix
	// IdleTimeout is how long a kept-alive connection may wait for its next
	// request (PressureIdle under pressure); it is http.Server's IdleTimeout.
	IdleTimeout time.Duration
	// SilentGrace is how long a new connection may stay silent (no request
	// yet) before, at a cap, it makes room like an idle one
	// (DefaultSilentGrace when 0).
	SilentGrace time.Duration
	Logger      *slog.Logger
}

// ConnListener enforces ConnLimits on the connections its listener
// accepts. At a cap the new connection takes the place of the oldest idle
// kept-alive one, or failing that of the oldest that has sent nothing for
// SilentGrace (of its own address at the per-address cap, of anyone's at
// the overall cap); when there is none it is answered 503 with Retry-After
// and the JSON error, then closed, and the refusals are logged every 10 s.
// Unlike netutil.LimitListener it never stops accepting, so refused clients
// learn at once instead of waiting in the kernel's backlog. Its ConnState
// must be the http.Server's, to know which connections are idle.
type ConnListener struct {
	net.Listener
	lim ConnLimits
	log *slog.Logger
	sem chan struct{} // refusals being answered

	mu         sync.Mutex
	open       int
	clients    map[string]*clientConns
	idle       list.List      // of *limitedConn, oldest first
	fresh      list.List      // of *limitedConn not yet past StateNew, oldest first
	hooked     bool           // ConnState is called: fresh really lists the silent
	refusing   map[string]int // refusals being answered, per client address
	swept      time.Time
	refusedN   [2]int64 // since the last log line: over Max, over PerClient
	logged     time.Time
	evictedN   int64
	refusedAll atomic.Int64
}

type clientConns struct {
	open  int
	idle  list.List // of *limitedConn, oldest first
	fresh list.List
}

// NewConnListener wraps l. With lim.Max and lim.PerClient both 0 it still
// tracks idle connections, to shorten their wait.
func NewConnListener(l net.Listener, lim ConnLimits) *ConnListener {
	if lim.Logger == nil {
		lim.Logger = slog.Default()
	}
	if lim.IdleTimeout <= 0 {
		lim.IdleTimeout = DefaultIdleTimeout
	}
	if lim.SilentGrace <= 0 {
		lim.SilentGrace = DefaultSilentGrace
	}
	return &ConnListener{Listener: l, lim: lim, log: lim.Logger, sem: make(chan struct{}, refuseParallel),
		clients: map[string]*clientConns{}, refusing: map[string]int{}}
}

// LimitListener caps the connections open at once at max (max <= 0: no
// cap), without a per-address cap.
func LimitListener(l net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return l
	}
	return NewConnListener(l, ConnLimits{Max: max, Logger: log})
}

// Open is the number of connections held now.
func (l *ConnListener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Refused is the number of connections refused so far.
func (l *ConnListener) Refused() int64 { return l.refusedAll.Load() }

// limitedConn is one accepted connection; it gives its place back once,
// however often it is closed.
type limitedConn struct {
	net.Conn
	l        *ConnListener
	client   string // "" for a trusted proxy: not capped per address
	cc       *clientConns
	accepted time.Time

	// Guarded by l.mu.
	released bool
	idleAt   *list.Element // in l.idle while idle
	cidleAt  *list.Element // in cc.idle while idle
	freshAt  *list.Element // in l.fresh until its first request
	cfreshAt *list.Element // in cc.fresh

	// armed: the server's next read deadline is its idle wait, which
	// pressure shortens.
	armed atomic.Bool
}

func (l *ConnListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
	}
}

// admit counts c in, making room by closing an idle connection if a cap
// is reached, or refuses it (nil).
func (l *ConnListener) admit(c net.Conn) *limitedConn {
	client := l.clientOf(c)
	l.mu.Lock()
	var cc *clientConns
	if client != "" {
		if cc = l.clients[client]; cc == nil {
			cc = &clientConns{}
			l.clients[client] = cc
		}
	}
	var victim *limitedConn
	now := time.Now()
	switch {
	case cc != nil && l.lim.PerClient > 0 && cc.open >= l.lim.PerClient:
		if victim = l.makeRoom(&cc.idle, &cc.fresh, now); victim == nil {
			l.refusedN[1]++
			l.dropIfEmpty(client, cc)
			l.mu.Unlock()
			l.refuse(c, client, refusedClient)
			return nil
		}
	case l.lim.Max > 0 && l.open >= l.lim.Max:
		if victim = l.makeRoom(&l.idle, &l.fresh, now); victim == nil {
			l.refusedN[0]++
			l.dropIfEmpty(client, cc)
			l.mu.Unlock()
			l.refuse(c, client, refusedServer)
			return nil
		}
	}
	if victim != nil {
		l.releaseLocked(victim)
		l.evictedN++
	}
	l.open++
	if cc != nil {
		cc.open++
	}
	lc := &limitedConn{Conn: c, l: l, client: client, cc: cc, accepted: now}
	lc.freshAt = l.fresh.PushBack(lc)
	if cc != nil {
		lc.cfreshAt = cc.fresh.PushBack(lc)
	}
	if l.pressedLocked() && time.Since(l.swept) >= pressureSweepGap {
		// Under pressure those already idle wait no longer than newcomers.
		// Under the lock: a connection still listed has not yet been seen
		// active, so its deadline is still its idle wait.
		l.swept = time.Now()
		dl := l.swept.Add(min(PressureIdle, l.lim.IdleTimeout))
		for e := l.idle.Front(); e != nil; e = e.Next() {
			_ = e.Value.(*limitedConn).Conn.SetReadDeadline(dl)
		}
	}
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Conn.Close()
	}
	return lc
}

// makeRoom picks the connection to close for a newcomer: the oldest idle
// one, else the oldest silent past SilentGrace, else none.
func (l *ConnListener) makeRoom(idle, fresh *list.List, now time.Time) *limitedConn {
	if e := idle.Front(); e != nil {
		return e.Value.(*limitedConn)
	}
	if e := fresh.Front(); e != nil && l.hooked {
		if c := e.Value.(*limitedConn); now.Sub(c.accepted) >= l.lim.SilentGrace {
			return c
		}
	}
	return nil
}

// clientOf is c's per-address key: its peer address (IPv6 by /64), or ""
// for a trusted proxy's connection.
func (l *ConnListener) clientOf(c net.Conn) string {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	a := ap.Addr().Unmap()
	for _, p := range l.lim.Trusted {
		if p.Contains(a) {
			return ""
		}
	}
	return clientip.Bucket(a.String())
}

func (l *ConnListener) dropIfEmpty(client string, cc *clientConns) {
	if cc != nil && cc.open == 0 {
		delete(l.clients, client)
	}
}

// pressedLocked: the server holds more than half of Max.
func (l *ConnListener) pressedLocked() bool { return l.lim.Max > 0 && l.open*2 > l.lim.Max }

// releaseLocked gives c's place back (once).
func (l *ConnListener) releaseLocked(c *limitedConn) {
	if c.released {
		return
	}
	c.released = true
	l.unidleLocked(c)
	l.unfreshLocked(c)
	l.open--
	if c.cc != nil {
		c.cc.open--
		l.dropIfEmpty(c.client, c.cc)
	}
}

func (l *ConnListener) unidleLocked(c *limitedConn) {
	if c.idleAt != nil {
		l.idle.Remove(c.idleAt)
		c.idleAt = nil
	}
	if c.cidleAt != nil {
		c.cc.idle.Remove(c.cidleAt)
		c.cidleAt = nil
	}
}

func (l *ConnListener) unfreshLocked(c *limitedConn) {
	if c.freshAt != nil {
		l.fresh.Remove(c.freshAt)
		c.freshAt = nil
	}
	if c.cfreshAt != nil {
		c.cc.fresh.Remove(c.cfreshAt)
		c.cfreshAt = nil
	}
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// SetReadDeadline shortens the server's idle wait under pressure: the
// first deadline after the connection went idle is that wait.
func (c *limitedConn) SetReadDeadline(t time.Time) error {
	if c.armed.Swap(false) && !t.IsZero() {
		if d := c.l.idleFor(c); time.Until(t) > d {
			t = time.Now().Add(d)
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// idleFor is how long c may now wait for its next request.
func (l *ConnListener) idleFor(c *limitedConn) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pressedLocked() || (c.cc != nil && l.lim.PerClient > 0 && c.cc.open*2 > l.lim.PerClient) {
		return min(PressureIdle, l.lim.IdleTimeout)
	}
	return l.lim.IdleTimeout
}

// ConnState is the http.Server's ConnState hook: it keeps the list of idle
// connections, which make room first at a cap.
func (l *ConnListener) ConnState(nc net.Conn, st http.ConnState) {
	for {
		if u, ok := nc.(interface{ NetConn() net.Conn }); ok { // TLS
			nc = u.NetConn()
			continue
		}
		break
	}
	c, ok := nc.(*limitedConn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooked = true
	if c.released {
		return
	}
	if st != http.StateNew {
		l.unfreshLocked(c)
	}
	switch st {
	case http.StateNew:
	case http.StateIdle:
		if c.idleAt == nil {
			c.idleAt = l.idle.PushBack(c)
			if c.cc != nil {
				c.cidleAt = c.cc.idle.PushBack(c)
			}
		}
		c.armed.Store(true)
	default:
		c.armed.Store(false)
		l.unidleLocked(c)
	}
}

// refuse answers c without holding up Accept. The answer waits for the
// request (a client still writing it may miss an answer that came before
// it was done) in one of refuseParallel slots, refusePerClient of them per
// address, so that one address's slow refusals cannot take them all. With
// no slot, it is answered at once if its request is already here, else
// just closed.
func (l *ConnListener) refuse(c net.Conn, client string, answer []byte) {
	l.refusedAll.Add(1)
	l.mu.Lock()
	if now := time.Now(); now.Sub(l.logged) >= refuseLogEvery {
		l.log.Warn("connections refused: a cap is reached", "over_max_conns", l.refusedN[0], "over_max_conns_per_ip", l.refusedN[1],
			"max_conns", l.lim.Max, "max_conns_per_ip", l.lim.PerClient, "open", l.open, "idle_closed_for_room", l.evictedN)
		l.logged, l.refusedN, l.evictedN = now, [2]int64{}, 0
	}
	slot := client == "" || l.refusing[client] < refusePerClient
	if slot {
		select {
		case l.sem <- struct{}{}:
			l.refusing[client]++
		default:
			slot = false
		}
	}
	l.mu.Unlock()
	if !slot {
		defer c.Close()
		_ = c.SetReadDeadline(time.Now()) // only what is already here
		if n, _ := c.Read(make([]byte, 16<<10)); n > 0 {
			_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
			_, _ = c.Write(answer)
		}
		return
	}
	go func() {
		defer func() {
			l.mu.Lock()
			if l.refusing[client]--; l.refusing[client] <= 0 {
				delete(l.refusing, client)
			}
			l.mu.Unlock()
			<-l.sem
		}()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseReadTimeout))
		if _, err := http.ReadRequest(bufio.NewReader(io.LimitReader(c, 16<<10))); err != nil {
			return
		}
		_ = c.SetDeadline(time.Now().Add(refuseWriteTimeout))
		if _, err := c.Write(answer); err != nil {
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
