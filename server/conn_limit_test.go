package server_test

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/waitroom/waitroom/server"
)

// connServer is an http.Server behind a ConnListener, with a signal for
// each connection that goes idle.
type connServer struct {
	l    *server.ConnListener
	addr string
	idle chan struct{}
}

func startConnServer(t *testing.T, lim server.ConnLimits) *connServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &connServer{l: server.NewConnListener(ln, lim), addr: ln.Addr().String(), idle: make(chan struct{}, 100)}
	hs := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }),
		ReadHeaderTimeout: 10 * time.Second, // longer than any test: silent connections stay
		IdleTimeout:       lim.IdleTimeout,
		ConnState: func(c net.Conn, st http.ConnState) {
			cs.l.ConnState(c, st)
			if st == http.StateIdle {
				cs.idle <- struct{}{}
			}
		},
	}
	go func() { _ = hs.Serve(cs.l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return cs
}

// dialFrom opens a connection from a loopback address of its own: a
// distinct client.
func (cs *connServer) dialFrom(t *testing.T, from string) *rawHTTP {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", cs.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second)) // the test's own bound
	return &rawHTTP{t: t, c: c, br: bufio.NewReader(c)}
}

const getLivez = "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"

// keptAlive opens a connection from `from`, makes one request on it and
// returns once the server counts it idle.
func (cs *connServer) keptAlive(t *testing.T, from string) *rawHTTP {
	t.Helper()
	r := cs.dialFrom(t, from)
	r.write(getLivez)
	if status, _, _ := r.answer(); status != 200 {
		t.Fatalf("request from %s: %d", from, status)
	}
	select {
	case <-cs.idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection never went idle")
	}
	return r
}

// silent opens a connection from `from` that sends nothing, and returns
// once the server holds it.
func (cs *connServer) silent(t *testing.T, from string, wantOpen int) *rawHTTP {
	t.Helper()
	r := cs.dialFrom(t, from)
	waitFor(t, "the server to hold the connection", func() bool { return cs.l.Open() == wantOpen })
	return r
}

// waitFor polls the listener's count: Accept runs on the server's goroutine,
// and there is nothing else to await.
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for start := time.Now(); !f(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// closedWithin reports whether the server closes r within d.
func closedWithin(r *rawHTTP, d time.Duration) bool {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	_, err := r.br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

func TestConnCapPerAddress(t *testing.T) {
	t.Parallel()
	cs := startConnServer(t, server.ConnLimits{Max: 100, PerClient: 3, IdleTimeout: time.Minute, SilentGrace: time.Minute})
	// The attacker's address holds its 3 with connections that send nothing.
	for i := range 3 {
		cs.silent(t, "127.0.0.5", i+1)
	}
	// Its fourth is told why, quickly, and closed.
	r := cs.dialFrom(t, "127.0.0.5")
	start := time.Now()
	r.write(getLivez)
	status, retry, code := r.answer()
	if status != http.StatusServiceUnavailable || retry != "2" || code != "too_many_connections" {
		t.Fatalf("over the per-address cap: %d Retry-After %q %s, want 503 too_many_connections with Retry-After 2", status, retry, code)
	}
	if !closedWithin(r, 2*time.Second) {
		t.Fatal("refused connection left open")
	}
	t.Logf("refused and closed in %v", time.Since(start))
	if cs.l.Refused() != 1 || cs.l.Open() != 3 {
		t.Fatalf("refused %d, open %d; want 1 and 3", cs.l.Refused(), cs.l.Open())
	}
	// Another address is served, again and again.
	for i := range 5 {
		r := cs.dialFrom(t, "127.0.0.2")
		r.write(getLivez)
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("honest request %d from another address: %d", i, status)
		}
	}
	// A refused connection that never sends its request costs its
	// descriptor for about refuseReadTimeout (1 s), no longer.
	quiet := cs.dialFrom(t, "127.0.0.5")
	if !closedWithin(quiet, 3*time.Second) {
		t.Fatal("a refused silent connection was held over 3s")
	}
}

func TestConnCapIdleConnectionsMakeRoom(t *testing.T) {
	t.Run("per address: its own oldest idle one", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 100, PerClient: 2, IdleTimeout: time.Minute})
		other := cs.keptAlive(t, "127.0.0.6")
		oldest := cs.keptAlive(t, "127.0.0.5")
		newer := cs.keptAlive(t, "127.0.0.5")
		// A third from .5: a NAT's next browser gets in; its address's oldest
		// idle connection is closed for it, nobody else's.
		cs.keptAlive(t, "127.0.0.5")
		if !closedWithin(oldest, 5*time.Second) {
			t.Fatal("the address's oldest idle connection was not closed for its newcomer")
		}
		for name, r := range map[string]*rawHTTP{"newer": newer, "other address's": other} {
			r.write(getLivez)
			if status, _, _ := r.answer(); status != 200 {
				t.Fatalf("%s idle connection after the newcomer: %d", name, status)
			}
		}
		if cs.l.Refused() != 0 {
			t.Fatalf("%d refused, want none", cs.l.Refused())
		}
	})
	t.Run("overall: anyone's oldest idle one", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 2, PerClient: 10, IdleTimeout: time.Minute})
		oldest := cs.keptAlive(t, "127.0.0.5")
		cs.keptAlive(t, "127.0.0.6")
		r := cs.dialFrom(t, "127.0.0.2")
		r.write(getLivez)
		if status, _, _ := r.answer(); status != 200 {
			t.Fatalf("newcomer at the overall cap with idle connections open: %d", status)
		}
		if !closedWithin(oldest, 5*time.Second) {
			t.Fatal("the oldest idle connection was not closed for the newcomer")
		}
	})
	t.Run("silent past the grace: the oldest", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 2, PerClient: 10, IdleTimeout: time.Minute, SilentGrace: time.Nanosecond})
		oldest := cs.silent(t, "127.0.0.5", 1)
		cs.silent(t, "127.0.0.6", 2)
		cs.keptAlive(t, "127.0.0.2")
		if !closedWithin(oldest, 5*time.Second) {
			t.Fatal("the oldest silent connection was not closed for the newcomer")
		}
	})
	t.Run("overall, none idle or silent long: refused", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 2, PerClient: 10, IdleTimeout: time.Minute, SilentGrace: time.Minute})
		cs.silent(t, "127.0.0.5", 1)
		cs.silent(t, "127.0.0.6", 2)
		r := cs.dialFrom(t, "127.0.0.2")
		r.write(getLivez)
		if status, retry, code := r.answer(); status != 503 || retry == "" || code != "over_capacity" {
			t.Fatalf("over the overall cap: %d %q %s, want 503 over_capacity with Retry-After", status, retry, code)
		}
	})
}

func TestConnCapSparesTrustedProxies(t *testing.T) {
	cs := startConnServer(t, server.ConnLimits{Max: 100, PerClient: 1, IdleTimeout: time.Minute, SilentGrace: time.Minute,
		Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.9/32")}})
	// The proxy carries many clients: its connections are not one client's.
	for i := range 3 {
		cs.silent(t, "127.0.0.9", i+1)
	}
	r := cs.dialFrom(t, "127.0.0.9")
	r.write(getLivez)
	if status, _, _ := r.answer(); status != 200 {
		t.Fatalf("a trusted proxy's fourth connection: %d", status)
	}
	// Anyone else is one client.
	cs.silent(t, "127.0.0.5", 5)
	r = cs.dialFrom(t, "127.0.0.5")
	r.write(getLivez)
	if status, _, code := r.answer(); status != 503 || code != "too_many_connections" {
		t.Fatalf("an untrusted address's second connection: %d %s", status, code)
	}
}

func TestConnIdleTimeoutShortensUnderPressure(t *testing.T) {
	t.Parallel()
	const idle = 10 * time.Second
	t.Run("no pressure: the configured wait", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 100, PerClient: 100, IdleTimeout: idle})
		r := cs.keptAlive(t, "127.0.0.5")
		if closedWithin(r, 2*server.PressureIdle) {
			t.Fatal("an idle connection was closed before its idle timeout with no pressure")
		}
	})
	t.Run("the server past half its cap", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 4, PerClient: 100, IdleTimeout: idle})
		// Already idle when pressure begins: swept to the short wait.
		early := cs.keptAlive(t, "127.0.0.5")
		cs.silent(t, "127.0.0.6", 2)
		cs.silent(t, "127.0.0.7", 3)
		start := time.Now()
		late := cs.keptAlive(t, "127.0.0.2") // goes idle under pressure
		for name, r := range map[string]*rawHTTP{"idle before": early, "idle under pressure": late} {
			if !closedWithin(r, idle/2) {
				t.Fatalf("%s: not closed within %v under pressure", name, idle/2)
			}
		}
		if d := time.Since(start); d > 4*server.PressureIdle {
			t.Fatalf("idle connections closed after %v under pressure, want about %v", d, server.PressureIdle)
		}
	})
	t.Run("an address past half its own cap", func(t *testing.T) {
		cs := startConnServer(t, server.ConnLimits{Max: 100, PerClient: 4, IdleTimeout: idle})
		cs.silent(t, "127.0.0.5", 1)
		cs.silent(t, "127.0.0.5", 2)
		start := time.Now()
		r := cs.keptAlive(t, "127.0.0.5")
		if !closedWithin(r, idle/2) || time.Since(start) > 4*server.PressureIdle {
			t.Fatalf("a pressed address's idle connection lasted %v, want about %v", time.Since(start), server.PressureIdle)
		}
	})
}

func TestConnListenerGivesPlacesBack(t *testing.T) {
	cs := startConnServer(t, server.ConnLimits{Max: 2, PerClient: 1, IdleTimeout: time.Minute})
	a := cs.silent(t, "127.0.0.5", 1)
	b := cs.keptAlive(t, "127.0.0.6")
	_ = a.c.Close()
	_ = b.c.Close()
	waitFor(t, "both places back", func() bool { return cs.l.Open() == 0 })
	// Both addresses may connect again.
	for _, from := range []string{"127.0.0.5", "127.0.0.6"} {
		cs.keptAlive(t, from)
	}
	if cs.l.Refused() != 0 {
		t.Fatalf("%d refused", cs.l.Refused())
	}
}
