package push

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// idleFetcher answers every ticket as waiting with its first message, so
// nothing but the first message and keep-alives is written.
type idleFetcher struct{}

func (idleFetcher) Fetch(_ context.Context, _ string, tickets []string) ([]Update, error) {
	out := make([]Update, len(tickets))
	for i, id := range tickets {
		out[i] = Update{Ticket: id, State: vocab.StateWaiting, Interval: 10 * time.Second, Payload: []byte(firstPayload(id))}
	}
	return out, nil
}

var benchConns = flag.Int("conns", 1000, "connections BenchmarkIdleConnMemory opens per iteration")

// BenchmarkIdleConnMemory reports what one idle push connection costs the
// server: Go heap and stacks in use after a GC, and resident memory after
// the freed pages went back to the OS. It opens -conns real loopback
// connections per iteration, held by raw clients that own nothing but their
// socket (a few hundred bytes of each figure are theirs). Run with
// -benchtime=1x; each connection takes two file descriptors.
//
//	go test ./internal/push/ -run '^$' -bench IdleConnMemory -benchtime=1x -args -conns=4000
func BenchmarkIdleConnMemory(b *testing.B) {
	for _, tr := range []string{"ws", "sse"} {
		b.Run(tr, func(b *testing.B) {
			var sum connCost
			for range b.N {
				c := connMemory(b, tr, *benchConns)
				sum.heap, sum.stack, sum.rss = sum.heap+c.heap, sum.stack+c.stack, sum.rss+c.rss
			}
			n := float64(b.N)
			b.ReportMetric((sum.heap+sum.stack)/n, "bytes/conn")
			b.ReportMetric(sum.heap/n, "heap-bytes/conn")
			b.ReportMetric(sum.stack/n, "stack-bytes/conn")
			b.ReportMetric(sum.rss/n, "rss-bytes/conn")
		})
	}
}

// connCost is bytes per connection.
type connCost struct{ heap, stack, rss float64 }

// settle collects garbage and gives freed pages back, then reads the Go
// runtime's and the kernel's view of this process.
func settle(b *testing.B) (runtime.MemStats, int64) {
	b.Helper()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return m, kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return m, 0
}

func connMemory(b *testing.B, tr string, n int) connCost {
	b.Helper()
	h := NewHub(idleFetcher{}, Options{Logger: slog.New(slog.DiscardHandler)})
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/{ticket}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("ticket")
		_ = h.ServeWS(w, r, "r", id, First{Payload: []byte(firstPayload(id))})
	})
	mux.HandleFunc("/sse/{ticket}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("ticket")
		_ = h.ServeSSE(w, r, "r", id, First{Payload: []byte(firstPayload(id))})
	})
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = h.Run(ctx) }()
	defer func() {
		h.Close()
		srv.Close()
		cancel()
		<-ran
	}()

	before, rss0 := settle(b)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range n {
		c, err := rawOpen(srv.Listener.Addr().String(), tr, fmt.Sprintf("T%d", i))
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Every connection registered and its first message written.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s := h.Stats()
		if s.Connections[tr] == n && s.Sent >= uint64(n) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("stats %+v, want %d %s connections", s, n, tr)
		}
	}
	after, rss1 := settle(b)
	per := func(a, b uint64) float64 { return float64(int64(a)-int64(b)) / float64(n) }
	return connCost{
		heap:  per(after.HeapInuse, before.HeapInuse),
		stack: per(after.StackInuse, before.StackInuse),
		rss:   per(uint64(rss1), uint64(rss0)),
	}
}

// rawOpen opens one push connection with nothing but a socket on the
// client's side: the request, then the response head read and dropped.
func rawOpen(addr, tr, ticket string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	req := "GET /sse/" + ticket + " HTTP/1.1\r\nHost: bench\r\n\r\n"
	want := "HTTP/1.1 200"
	if tr == "ws" {
		req = "GET /ws/" + ticket + " HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
		want = "HTTP/1.1 101"
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		c.Close()
		return nil, err
	}
	var buf [512]byte
	got := 0
	for !bytes.Contains(buf[:got], []byte("\r\n\r\n")) {
		if got == len(buf) {
			c.Close()
			return nil, fmt.Errorf("response head too long: %q", buf[:got])
		}
		m, err := c.Read(buf[got:])
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("read response: %w", err)
		}
		got += m
	}
	if !bytes.HasPrefix(buf[:got], []byte(want)) {
		c.Close()
		return nil, fmt.Errorf("response %q, want %s", buf[:got], want)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}
