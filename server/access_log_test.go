package server_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// lines parses the JSON log lines written so far, and forgets them.
func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", raw)
		}
		out = append(out, m)
	}
	l.b.Reset()
	return out
}

// TestAccessLogOneLinePerRequest: one JSON line per request with its id,
// status, duration and client; the id is on the response too. An incoming
// id is kept only from a trusted proxy and only when well-formed; the
// query (which may carry an embed key) never reaches the log.
func TestAccessLogOneLinePerRequest(t *testing.T) {
	keys, _ := token.Generate()
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{})
	logs := &lockedBuffer{}
	do := func(trusted []netip.Prefix, path, id, xff string) (*http.Response, map[string]any) {
		t.Helper()
		srv := server.New(line, server.Config{AdminToken: adminToken, TrustedProxies: trusted,
			AccessLog: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		ts := httptest.NewServer(srv)
		defer ts.Close()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ls := logs.lines(t)
		if len(ls) != 1 {
			t.Fatalf("%s: %d log lines, want 1: %v", path, len(ls), ls)
		}
		return res, ls[0]
	}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

	res, l := do(nil, "/api/rooms/nope/tickets/x?key=SECRET", "", "")
	if l["status"] != 404.0 || l["method"] != "GET" || l["path"] != "/api/rooms/nope/tickets/x" || l["client"] != "127.0.0.1" ||
		l["request_id"] == "" || l["request_id"] != res.Header.Get("X-Request-Id") || l["duration_ms"] == nil {
		t.Fatalf("line %v, response id %q", l, res.Header.Get("X-Request-Id"))
	}
	if strings.Contains(l["path"].(string), "SECRET") {
		t.Fatal("the query reached the log")
	}
	// A client that is not a trusted proxy cannot choose the id.
	if res, l = do(nil, "/livez", "forged-id", ""); l["request_id"] == "forged-id" || res.Header.Get("X-Request-Id") == "forged-id" {
		t.Fatalf("an untrusted peer chose the request id: %v", l)
	}
	// A trusted proxy's well-formed id is kept, and its X-Forwarded-For names the client.
	if res, l = do(loopback, "/livez", "lb-0123.abc_DEF", "203.0.113.9"); l["request_id"] != "lb-0123.abc_DEF" ||
		res.Header.Get("X-Request-Id") != "lb-0123.abc_DEF" || l["client"] != "203.0.113.9" || l["status"] != 200.0 {
		t.Fatalf("trusted proxy: %v", l)
	}
	// Even from a trusted proxy, junk is replaced.
	for _, junk := range []string{"a b", strings.Repeat("x", 65), "id\u00e9", `"}{"level":"ERROR"`} {
		if _, l = do(loopback, "/livez", junk, ""); l["request_id"] == junk {
			t.Fatalf("kept a malformed id %q", junk)
		}
	}
}
