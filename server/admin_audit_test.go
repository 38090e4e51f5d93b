package server_test

import (
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// auditEnv is a server whose log and access log are JSON lines the test
// reads, with a degraded-mode flag so the drill is served.
func auditEnv(t *testing.T) (*env, *lockedBuffer) {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{Logger: log})
	srv := server.New(line, server.Config{AdminToken: adminToken, Logger: log, AccessLog: log,
		Avail: queue.NewAvailability(nil, log)})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &env{t: t, srv: srv, url: ts.URL, line: line}, logs
}

// audits are the audit lines logged so far (and forgets every line).
func audits(t *testing.T, logs *lockedBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range logs.lines(t) {
		if l["msg"] == adminops.AuditMessage {
			out = append(out, l)
		}
	}
	return out
}

// oneAudit asserts that r logged exactly one audit line, by the admin
// token, for room and what, with r's request id, and returns it.
func oneAudit(t *testing.T, logs *lockedBuffer, r resp, room, what string) map[string]any {
	t.Helper()
	as := audits(t, logs)
	if len(as) != 1 {
		t.Fatalf("%s %s: %d audit lines, want 1: %v", what, room, len(as), as)
	}
	a := as[0]
	id := r.header.Get("X-Request-Id")
	if a["room"] != room || a["what"] != what || a["by"] != adminops.ByAdminToken || id == "" || a["request_id"] != id || a["remote"] == "" {
		t.Fatalf("%s %s: audit line %v (request id %q)", what, room, a, id)
	}
	return a
}

func fieldNames(a map[string]any) []string {
	var out []string
	fs, _ := a["fields"].([]any)
	for _, f := range fs {
		s, _ := f.(string)
		out = append(out, s)
	}
	return out
}

// TestAdminAPIChangesAreLogged: every change made through the admin API
// (create, pause, pace, capacity, delete, drill) writes the dashboard's
// audit line: who, what, which fields and the request id; reads, refused
// tokens and refused settings write none, and a secret's value never
// reaches the log.
func TestAdminAPIChangesAreLogged(t *testing.T) {
	e, logs := auditEnv(t)

	r := e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": 10, "user_secret": "s3cret-value-of-32-characters!!"}`)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Fatalf("the room's secret reached the log: %s", logs.String())
	}
	a := oneAudit(t, logs, r, "sale", adminops.Created)
	if fs := fieldNames(a); !slices.Contains(fs, "capacity") || !slices.Contains(fs, "user_secret") {
		t.Fatalf("create: fields %v", fs)
	}

	r = e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": 20, "paused": true, "batch_size": 3, "user_secret": "s3cret-value-of-32-characters!!"}`)
	if r.status != 200 {
		t.Fatalf("save: %d %s", r.status, r.raw)
	}
	a = oneAudit(t, logs, r, "sale", adminops.Saved)
	if fs := fieldNames(a); !slices.Equal(fs, []string{"batch_size", "capacity", "paused"}) {
		t.Fatalf("pause, pace and capacity: fields %v", fs)
	}
	if to, _ := a["to"].(map[string]any); to["paused"] != true || to["capacity"] != 20.0 || to["batch_size"] != 3.0 {
		t.Fatalf("pause, pace and capacity: new values %v", a["to"])
	}

	// Reads, wrong tokens and refused settings change nothing: no line.
	e.admin("GET", "/admin/api/rooms/sale", "")
	e.do(nil, "PUT", "/admin/api/rooms/sale", `{"paused": false}`, "Authorization", "Bearer wrong")
	wantError(t, e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": -1}`), 400, "invalid")
	if as := audits(t, logs); len(as) != 0 {
		t.Fatalf("no change, yet audit lines: %v", as)
	}

	r = e.admin("POST", "/admin/api/degrade", `{"on": true}`)
	if r.status != 200 {
		t.Fatalf("drill: %d %s", r.status, r.raw)
	}
	if to, _ := oneAudit(t, logs, r, "", adminops.Drill)["to"].(map[string]any); to["mode"] != "on" || to["all_servers"] != true {
		t.Fatalf("drill: %v", to)
	}
	e.admin("POST", "/admin/api/degrade", `{"on": null}`)
	audits(t, logs)

	r = e.admin("DELETE", "/admin/api/rooms/sale", "")
	if r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	oneAudit(t, logs, r, "sale", adminops.Deleted)
}
