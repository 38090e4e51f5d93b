package push

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

func TestSSEHeadersAndFraming(t *testing.T) {
	e := newEnv(t, Options{}, waiting(time.Second), nil)
	resp, err := e.srv.Client().Get(e.srv.URL + "/sse/r/T")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	r := bufio.NewReader(resp.Body)
	var lines []string
	for len(lines) < 4 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	want := []string{"retry: 2000\n", "\n", "data: " + firstPayload("T") + "\n", "\n"}
	if strings.Join(lines, "") != strings.Join(want, "") {
		t.Errorf("stream = %q, want %q", lines, want)
	}
}

func TestSSEKeepAliveAndClientLeaving(t *testing.T) {
	e := newEnv(t, Options{PingInterval: 5 * time.Second}, waiting(time.Second), nil)
	sse := e.dialSSE("r", "T")
	sse.next()

	e.clock.Advance(5 * time.Second)
	select {
	case c := <-sse.comments:
		if c != ": ping" {
			t.Errorf("comment %q", c)
		}
	case <-time.After(wait):
		t.Fatal("no keep-alive comment")
	}

	sse.resp.Body.Close()
	if err := e.servedResult(); err != nil {
		t.Errorf("ServeSSE: %v", err)
	}
	if s := e.hub.Stats(); s.Connections["sse"] != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestSSEMultilinePayload(t *testing.T) {
	e := newEnv(t, Options{}, func(_, _ string, _ int, _ time.Time) Update {
		return Update{State: vocab.StateAdmitted, Payload: []byte("{\n\"a\":1\n}")}
	}, nil)
	sse := e.dialSSE("r", "T")
	sse.next()
	e.hub.Notify("r", []string{"T"})
	if got := sse.next(); got != "{\n\"a\":1\n}" {
		t.Errorf("got %q", got)
	}
}

// TestSSEOverHTTP2StreamsThroughTheHandler: HTTP/2 cannot be hijacked, so
// the stream stays with its handler, which returns once the client left.
func TestSSEOverHTTP2StreamsThroughTheHandler(t *testing.T) {
	h := NewHub(idleFetcher{}, Options{Logger: slog.New(slog.DiscardHandler)})
	served := make(chan error, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served <- h.ServeSSE(w, r, "r", "T", First{Payload: []byte(firstPayload("T"))})
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	defer h.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
	}
	r := bufio.NewReader(resp.Body)
	var lines []string
	for len(lines) < 4 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	if got, want := strings.Join(lines, ""), "retry: 2000\n\ndata: "+firstPayload("T")+"\n\n"; got != want {
		t.Errorf("stream %q, want %q", got, want)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeSSE: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("handler did not return after the client left")
	}
}
