package push

import (
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// TestHijackSetsUserTimeout: a WebSocket's TCP connection drops when what
// it wrote stays unacknowledged for the user timeout (TCP_USER_TIMEOUT):
// with keep-alives only for silent connections, this finds a peer gone
// without a word while messages flow.
func TestHijackSetsUserTimeout(t *testing.T) {
	got := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := (&smallBuffers{ResponseWriter: w, userTimeout: 3 * time.Second}).Hijack()
		if err != nil {
			t.Error(err)
			got <- -1
			return
		}
		defer conn.Close()
		raw, err := conn.(syscall.Conn).SyscallConn()
		if err != nil {
			t.Error(err)
			got <- -1
			return
		}
		v := -1
		_ = raw.Control(func(fd uintptr) {
			v, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout)
		})
		if err != nil {
			t.Error(err)
		}
		got <- v
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != 3000 {
			t.Errorf("TCP_USER_TIMEOUT = %d ms, want 3000", v)
		}
	case <-time.After(wait):
		t.Fatal("handler did not answer")
	}
}
