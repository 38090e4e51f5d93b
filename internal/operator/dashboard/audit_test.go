package dashboard_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/queue"
)

// auditLog keeps the dashboard's JSON log lines for a test to read.
type auditLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *auditLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take returns the audit lines written so far, and forgets every line.
func (l *auditLog) take(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if raw == "" {
			continue
		}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", raw)
		}
		if m["msg"] == adminops.AuditMessage {
			out = append(out, m)
		}
	}
	l.b.Reset()
	return out
}

// TestChangesAreLoggedAsTheAdminAPIs: the dashboard's changes write the
// admin API's audit line (server/admin_audit_test.go), by a session.
func TestChangesAreLoggedAsTheAdminAPIs(t *testing.T) {
	logs := &auditLog{}
	site := newSite(t, siteOptions{deps: func(d *dashboard.Deps) { d.Logger = slog.New(slog.NewJSONHandler(logs, nil)) }})
	site.putRoom("drop", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	logs.take(t)

	one := func(what string) map[string]any {
		t.Helper()
		as := logs.take(t)
		if len(as) != 1 || as[0]["room"] != "drop" || as[0]["what"] != what || as[0]["by"] != adminops.BySession {
			t.Fatalf("%s: audit lines %v", what, as)
		}
		return as[0]
	}
	fields := func(a map[string]any) []string {
		var out []string
		fs, _ := a["fields"].([]any)
		for _, f := range fs {
			s, _ := f.(string)
			out = append(out, s)
		}
		return out
	}

	if p := b.postForm("/admin/rooms/drop/controls", url.Values{"paused": {"true"}, "capacity": {"40"}}); p.status != http.StatusSeeOther {
		t.Fatalf("controls: %d", p.status)
	}
	a := one(adminops.Controls)
	if fs := fields(a); !slices.Equal(fs, []string{"capacity", "paused"}) {
		t.Fatalf("controls: fields %v", fs)
	}
	if to, _ := a["to"].(map[string]any); to["paused"] != true || to["capacity"] != 40.0 {
		t.Fatalf("controls: new values %v", a["to"])
	}

	// A refused control changes nothing and logs nothing.
	if p := b.postForm("/admin/rooms/drop/controls", url.Values{"capacity": {"lots"}}); p.status != http.StatusBadRequest {
		t.Fatalf("bad capacity: %d", p.status)
	}
	if as := logs.take(t); len(as) != 0 {
		t.Fatalf("a refused control was logged: %v", as)
	}

	if p := b.postForm("/admin/degrade", url.Values{"mode": {"on"}}); p.status != http.StatusSeeOther {
		t.Fatalf("drill: %d", p.status)
	}
	as := logs.take(t)
	if len(as) != 1 {
		t.Fatalf("drill: audit lines %v", as)
	}
	if to, _ := as[0]["to"].(map[string]any); as[0]["what"] != adminops.Drill || as[0]["by"] != adminops.BySession || to["mode"] != "on" {
		t.Fatalf("drill: audit lines %v", as)
	}
	b.postForm("/admin/degrade", url.Values{"mode": {"auto"}})
	logs.take(t)

	if p := b.postForm("/admin/rooms/drop/delete", url.Values{}); p.status != http.StatusSeeOther {
		t.Fatalf("delete: %d", p.status)
	}
	one(adminops.Deleted)
}
