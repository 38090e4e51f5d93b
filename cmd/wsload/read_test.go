package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestReadMessageAndCloseAll: messages are read whole into the reused
// buffer, whatever their sizes; a read blocked without a context ends when
// closeAll closes the waiters' connections.
func TestReadMessageAndCloseAll(t *testing.T) {
	msgs := []string{`{"state":"waiting"}`, strings.Repeat("y", 3000), "z"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for _, m := range msgs {
			if err := c.Write(r.Context(), websocket.MessageText, []byte(m)); err != nil {
				return
			}
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 10)
	l := &loader{waiters: map[*waiter]struct{}{}}
	l.waiters[&waiter{conn: conn}] = struct{}{}

	var buf bytes.Buffer
	for i, want := range msgs {
		typ, got, err := readMessage(conn, &buf)
		if err != nil || typ != websocket.MessageText || string(got) != want {
			t.Fatalf("message %d: %v %q (%v), want %q", i, typ, got, err, want)
		}
	}
	ended := make(chan error, 1)
	go func() {
		_, _, err := readMessage(conn, &buf)
		ended <- err
	}()
	l.closeAll()
	select {
	case err := <-ended:
		if err == nil {
			t.Error("a read on a closed connection gave a message")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closeAll did not end the read")
	}
}
