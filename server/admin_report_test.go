package server_test

import (
	"context"
	"encoding/csv"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// newReportEnv is newEnv with the sale's history on, its store returned.
func newReportEnv(t *testing.T) (*env, *history.Store) {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = "http://waitroom.test"
	// The real time: the history's days expire in real time.
	clock := clockwork.NewFakeClockAt(time.Now().UTC().Truncate(time.Minute))
	prefix := redistest.Prefix(t)
	line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{Clock: clock})
	hist := history.New(rdb, prefix, 0, nil)
	srv := server.New(line, server.Config{AdminToken: adminToken, History: hist, Figures: hist,
		Ping: func(ctx context.Context) error { return rdb.Ping(ctx).Err() }})
	ts := httptest.NewServer(checkedByOpenAPI(t, srv))
	t.Cleanup(ts.Close)
	return &env{t: t, srv: srv, url: ts.URL, line: line, clock: clock}, hist
}

func TestRoomReportExport(t *testing.T) {
	e, hist := newReportEnv(t)
	ctx := context.Background()
	e.putRoom("sale", `{"capacity": 1}`)
	e.putRoom("work", `{"bot_protection": {"proof_of_work": "on"}}`)
	start := e.clock.Now()
	read := func() {
		st, err := e.line.Stats(ctx, "sale", e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := hist.Record(ctx, "sale", e.clock.Now(), history.FromStats(st)); err != nil {
			t.Fatal(err)
		}
	}
	read()
	for _, v := range []string{"a", "b", "c"} {
		if _, _, err := e.line.Enter(ctx, "sale", v); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(time.Minute)
	read()
	if _, _, err := e.line.Enter(ctx, "sale", "d"); err != nil {
		t.Fatal(err)
	}
	// A challenge of the room with proof of work, counted by this server.
	if r := e.do(nil, "GET", "/api/rooms/work/challenge", ""); r.status != 200 {
		t.Fatalf("challenge: %d %s", r.status, r.raw)
	}
	if err := hist.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	r := e.admin("GET", "/admin/api/rooms/sale/report", "")
	if r.status != 200 {
		t.Fatalf("report: %d %s", r.status, r.raw)
	}
	rows, _ := r.body["minutes"].([]any)
	if len(rows) != 2 {
		t.Fatalf("%d minutes, want 2: %s", len(rows), r.raw)
	}
	first, last := rows[0].(map[string]any), rows[1].(map[string]any)
	// Three arrived after the first reading, one after the second (up to now).
	if first["minute"] != start.Format(time.RFC3339) || first["arrivals"] != 3.0 || first["waiting"] != 0.0 || last["arrivals"] != 1.0 || last["waiting"] != 2.0 {
		t.Errorf("minutes: %v, %v", first, last)
	}
	sum := r.body["summary"].(map[string]any)
	if sum["arrivals"] != 4.0 || sum["admitted"] != 1.0 || sum["peak_line"] != 2.0 {
		t.Errorf("summary: %v", sum)
	}

	c := e.admin("GET", "/admin/api/rooms/sale/report?format=csv&from="+start.Add(time.Minute).Format(time.RFC3339), "")
	if c.status != 200 || !strings.HasPrefix(c.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %d %s %s", c.status, c.header.Get("Content-Type"), c.raw)
	}
	recs, err := csv.NewReader(strings.NewReader(c.raw)).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "minute" || recs[1][0] != start.Add(time.Minute).Format(time.RFC3339) || recs[1][4] != "1" {
		t.Errorf("csv from the second minute: %q (%v)", recs, err)
	}

	w := e.admin("GET", "/admin/api/rooms/work/report?format=json", "")
	if ws, _ := w.body["summary"].(map[string]any); w.status != 200 || ws["challenges_issued"] != 1.0 {
		t.Errorf("work room: %d %s", w.status, w.raw)
	}

	for q, field := range map[string]string{
		"?from=yesterday": "from",
		"?to=2026-13-01":  "to",
		"?format=xml":     "format",
		"?from=" + start.Add(time.Hour).Format(time.RFC3339) + "&to=" + start.Format(time.RFC3339): "to",
	} {
		r := e.admin("GET", "/admin/api/rooms/sale/report"+q, "")
		wantError(t, r, 400, "invalid")
		if f := r.body["error"].(map[string]any)["field"]; f != field {
			t.Errorf("%s: field %v, want %s: %s", q, f, field, r.raw)
		}
	}
	wantError(t, e.admin("GET", "/admin/api/rooms/nope/report", ""), 404, "room_not_found")
	if r := e.do(nil, "GET", "/admin/api/rooms/sale/report", ""); r.status != 401 {
		t.Errorf("without the token: %d", r.status)
	}
}
