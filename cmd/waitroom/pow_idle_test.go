package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/pow"
)

// TestRunMakesNoProofOfWorkUntilAPlaceIsChecked: a server, its demo room
// asking for proof of work included, runs no scrypt at start, for a room
// without proof of work, nor for a challenge (an HMAC, given at the first
// ask); the first run is the check of a solution, one run.
func TestRunMakesNoProofOfWorkUntilAPlaceIsChecked(t *testing.T) {
	before := pow.Runs()
	const admin = "5e0c1f7a93b24d68a1c7e2f40b9d3a56"
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--admin-token", admin, "--demo=false"},
			func(string) string { return "" }, logs, func(addr string) { addrc <- addr })
	}()
	// The server stops before its data directory goes, on failure too.
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { _ = stop() })
	var base string
	select {
	case addr := <-addrc:
		base = "http://" + addr
	case err := <-done:
		done <- err // for stop
		t.Fatalf("run ended early: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	do := func(method, path, body string, header ...string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}

	if code, b := do(http.MethodPut, "/admin/api/rooms/free", `{"capacity": 10, "batch_size": 1, "batch_interval_ms": 1000,
		"bot_protection": {"proof_of_work": "off"}}`, "Authorization", "Bearer "+admin); code/100 != 2 {
		t.Fatalf("put room: %d %s", code, b)
	}
	code, b := do(http.MethodPost, "/api/rooms/free/enter", "{}")
	var tk struct{ Ticket, State string }
	if err := json.Unmarshal(b, &tk); code != 200 || err != nil || tk.Ticket == "" {
		t.Fatalf("enter a room without proof of work: %d %s", code, b)
	}
	if code, b := do(http.MethodGet, "/api/rooms/free/tickets/"+tk.Ticket, ""); code != 200 {
		t.Fatalf("status: %d %s", code, b)
	}
	if got := pow.Runs() - before; got != 0 {
		t.Fatalf("%d scrypt runs with no proof of work asked for", got)
	}

	code, b = do(http.MethodPost, "/api/rooms/demo/enter", "{}")
	var refused struct {
		Error     struct{ Code string }
		Challenge pow.Challenge
	}
	if err := json.Unmarshal(b, &refused); err != nil || code != 403 || refused.Error.Code != "challenge_required" {
		t.Fatalf("enter the demo room without work: %d %s", code, b)
	}
	if got := pow.Runs() - before; got != 0 {
		t.Fatalf("%d scrypt runs to issue a challenge", got)
	}
	solved, err := pow.Solve(ctx, refused.Challenge, 2)
	if err != nil {
		t.Fatal(err)
	}
	solving := pow.Runs()
	if code, b := do(http.MethodPost, "/api/rooms/demo/enter", `{"pow": "`+solved.Encode()+`"}`); code != 200 {
		t.Fatalf("enter with the solution: %d %s", code, b)
	}
	if got := pow.Runs() - solving; got != 1 {
		t.Errorf("checking a solution took %d scrypt runs, want 1", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
