package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adminops"
)

// TestScheduledOpeningOverTheAPI: before opens_at, enter answers scheduled
// with opens_at and no position; the admin API shows the pre-queue, opens
// now (logged, once: a second open is 409 not_scheduled) and, after the
// tick's draw, the record; the tickets are then waiting at places 1..3.
func TestScheduledOpeningOverTheAPI(t *testing.T) {
	e := newEnv(t)
	opens := t0.Add(time.Hour).Format(time.RFC3339)
	e.putRoom("drop", `{"opens_at": "`+opens+`", "paused": true}`)
	type visitor struct {
		c  *http.Client
		id string
	}
	var visitors []visitor
	for i := 0; i < 3; i++ {
		c := e.browser()
		r := e.do(c, "POST", "/api/rooms/drop/enter", "")
		if r.status != 200 || r.body["state"] != "scheduled" || r.body["position"] != float64(0) || r.body["next_update_ms"] != float64(10000) || r.body["opens_at"] != t0.Add(time.Hour).Format("2006-01-02T15:04:05.000Z") || r.body["eta_s"] != nil {
			t.Fatalf("enter before the opening: %d %s", r.status, r.raw)
		}
		visitors = append(visitors, visitor{c, r.body["ticket"].(string)})
	}
	// Three seconds before the opening, a polling page looks again just after it.
	e.clock.Advance(time.Hour - 3*time.Second)
	if r := e.do(visitors[0].c, "GET", "/api/rooms/drop/tickets/"+visitors[0].id, ""); r.body["next_update_ms"] != float64(4000) {
		t.Fatalf("next update 3 s before the opening: %s", r.raw)
	}
	e.clock.Advance(3*time.Second - time.Hour)
	r := e.admin("GET", "/admin/api/rooms/drop/draw", "")
	if r.status != 200 || r.body["scheduled"] != float64(3) || r.body["draw"] != nil {
		t.Fatalf("draw before the opening: %d %s", r.status, r.raw)
	}
	wantError(t, e.admin("POST", "/admin/api/rooms/Bad!/open", ""), 400, "invalid")
	wantError(t, e.admin("POST", "/admin/api/rooms/nope/open", ""), 404, "room_not_found")
	if r := e.do(nil, "POST", "/admin/api/rooms/drop/open", ""); r.status != 401 {
		t.Fatalf("open without the token: %d", r.status)
	}

	e.clock.Advance(time.Minute)
	r = e.admin("POST", "/admin/api/rooms/drop/open", "")
	if r.status != 200 || r.body["opens_at"] != t0.Add(time.Minute).Format(time.RFC3339) {
		t.Fatalf("open now: %d %s", r.status, r.raw)
	}
	wantError(t, e.admin("POST", "/admin/api/rooms/drop/open", ""), 409, "not_scheduled")

	s, err := e.line.Settings(context.Background(), "drop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.line.Tick(context.Background(), "drop", &s); err != nil {
		t.Fatal(err)
	}
	r = e.admin("GET", "/admin/api/rooms/drop/draw", "")
	d, _ := r.body["draw"].(map[string]any)
	if r.status != 200 || r.body["scheduled"] != float64(0) || d == nil || d["drawn"] != float64(3) || d["server"] == "" || len(d["order_sha256"].(string)) != 64 {
		t.Fatalf("draw after the opening: %d %s", r.status, r.raw)
	}
	if st := e.admin("GET", "/admin/api/rooms/drop/stats", ""); st.body["scheduled"] != float64(0) || st.body["waiting"] != float64(3) {
		t.Fatalf("stats after the draw: %s", st.raw)
	}
	places := map[float64]bool{}
	for _, v := range visitors {
		r := e.do(v.c, "GET", "/api/rooms/drop/tickets/"+v.id, "")
		if r.status != 200 || r.body["state"] != "waiting" || r.body["entry_position"] != r.body["position"] {
			t.Fatalf("ticket after the draw: %d %s", r.status, r.raw)
		}
		places[r.body["position"].(float64)] = true
	}
	if !places[1] || !places[2] || !places[3] {
		t.Fatalf("drawn places %v, want 1, 2 and 3", places)
	}
}

// TestOpenNowIsLogged: the admin API's open now writes the audit line.
func TestOpenNowIsLogged(t *testing.T) {
	e, logs := auditEnv(t)
	opens := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := e.admin("PUT", "/admin/api/rooms/drop", `{"opens_at": "`+opens+`"}`); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	audits(t, logs)
	r := e.admin("POST", "/admin/api/rooms/drop/open", "")
	if r.status != 200 {
		t.Fatalf("open now: %d %s", r.status, r.raw)
	}
	a := oneAudit(t, logs, r, "drop", adminops.Opened)
	if to, _ := a["to"].(map[string]any); to["opens_at"] != r.body["opens_at"] {
		t.Fatalf("open now: audit %v, answer %s", a, r.raw)
	}
	wantError(t, e.admin("POST", "/admin/api/rooms/drop/open", ""), 409, "not_scheduled")
	if as := audits(t, logs); len(as) != 0 {
		t.Fatalf("a refused open now was logged: %v", as)
	}
}
