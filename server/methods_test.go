package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/waitroom/waitroom/internal/operator/adminops"
)

// dialTicket opens b's WebSocket for ticket id in room.
func (e *env) dialTicket(ctx context.Context, b *http.Client, room, id string) *websocket.Conn {
	e.t.Helper()
	hdr := http.Header{}
	for _, c := range b.Jar.Cookies(mustURL(e.url)) {
		hdr.Add("Cookie", c.Name+"="+c.Value)
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/"+room+"/tickets/"+id+"/ws",
		&websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// TestSoldOutIsPushedAtOnceAndUndone: an open page hears of the sale's end
// from the settings announcement, without a tick or its tier slot, and of the
// undo likewise, its place back; the admitted visitor's token keeps verifying.
func TestSoldOutIsPushedAtOnceAndUndone(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { _ = e.srv.Run(ctx) }()
	e.putRoom("drop", `{"batch_size": 1, "sold_out_message": "All 500 pairs are gone"}`)
	in := e.do(e.browser(), "POST", "/api/rooms/drop/enter", "")
	tok, _ := in.body["token"].(string)
	if in.body["state"] != "admitted" || tok == "" {
		t.Fatalf("first visitor: %s", in.raw)
	}
	var waiters []*http.Client
	var ids []string
	for i := 0; i < 2; i++ {
		b := e.browser()
		r := e.do(b, "POST", "/api/rooms/drop/enter", "")
		waiters, ids = append(waiters, b), append(ids, r.body["ticket"].(string))
	}
	ws := e.dialTicket(ctx, waiters[1], "drop", ids[1])
	if m := readTicket(t, ctx, ws); m["state"] != "waiting" || m["position"] != 2.0 {
		t.Fatalf("first message: %v", m)
	}

	start := time.Now()
	r := e.admin("POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": true}`)
	if r.status != http.StatusOK || r.body["sold_out"] != true {
		t.Fatalf("sold out: %d %s", r.status, r.raw)
	}
	m := readTicket(t, ctx, ws)
	if m["state"] != "sold_out" || m["sold_out_message"] != "All 500 pairs are gone" || m["position"] != 0.0 {
		t.Fatalf("after sold out: %v", m)
	}
	// No tick ran (the fake clock stood still): the announcement carried it.
	t.Logf("sold out reached the open page %v after the admin call", time.Since(start))

	late := e.do(e.browser(), "POST", "/api/rooms/drop/enter", "")
	if late.body["state"] != "sold_out" || late.body["ticket"] != "" {
		t.Fatalf("newcomer after sold out: %s", late.raw)
	}
	e.clock.Advance(time.Second) // past the admitted visitor's jitter
	v := e.do(nil, "POST", "/api/tokens/verify", `{"token": "`+tok+`", "room": "drop"}`)
	if v.body["valid"] != true {
		t.Fatalf("admitted token after sold out: %s", v.raw)
	}

	if r := e.admin("POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": false}`); r.status != http.StatusOK || r.body["sold_out"] != false {
		t.Fatalf("undo: %d %s", r.status, r.raw)
	}
	if m := readTicket(t, ctx, ws); m["state"] != "waiting" || m["position"] != 2.0 {
		t.Fatalf("after undo: %v, want waiting at 2 again", m)
	}
	st := e.do(waiters[0], "GET", "/api/rooms/drop/tickets/"+ids[0], "")
	if st.body["state"] != "waiting" || st.body["position"] != 1.0 {
		t.Fatalf("head after undo: %s", st.raw)
	}
}

func TestSoldOutEndpointRefusals(t *testing.T) {
	e := newEnv(t)
	e.putRoom("drop", `{}`)
	wantError(t, e.admin("POST", "/admin/api/rooms/drop/sold-out", `{}`), http.StatusBadRequest, "invalid")
	wantError(t, e.admin("POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": "yes"}`), http.StatusBadRequest, "invalid")
	wantError(t, e.admin("POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": true, "x": 1}`), http.StatusBadRequest, "invalid")
	wantError(t, e.admin("POST", "/admin/api/rooms/nope/sold-out", `{"sold_out": true}`), http.StatusNotFound, "room_not_found")
	wantError(t, e.admin("POST", "/admin/api/rooms/BAD/sold-out", `{"sold_out": true}`), http.StatusBadRequest, "invalid")
	// Without the admin token: nothing changes.
	r := e.do(nil, "POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": true}`)
	if r.status != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", r.status)
	}
	if s := e.admin("GET", "/admin/api/rooms/drop", ""); s.body["sold_out"] != false {
		t.Fatalf("refused calls changed the room: %s", s.raw)
	}
}

// TestSoldOutIsLoggedAsAnAdminChange: the API's sold-out call leaves the
// same audit line as every admin change.
func TestSoldOutIsLoggedAsAnAdminChange(t *testing.T) {
	e, logs := auditEnv(t)
	e.putRoom("drop", `{}`)
	audits(t, logs)
	r := e.admin("POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": true}`)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	a := oneAudit(t, logs, r, "drop", adminops.SoldOut)
	to, _ := a["to"].(map[string]any)
	if fmt.Sprint(a["fields"]) != "[sold_out]" || to["sold_out"] != true {
		t.Fatalf("audit line %v", a)
	}
	r = e.admin("POST", "/admin/api/rooms/drop/sold-out", `{"sold_out": false}`)
	a = oneAudit(t, logs, r, "drop", adminops.SoldOut)
	if to, _ := a["to"].(map[string]any); to["sold_out"] != false {
		t.Fatalf("undo's audit line %v", a)
	}
}

// TestLineFullAnswersFullWithARetryHint: at max_waiting a newcomer gets
// state full, no ticket, and a hint (body and Retry-After); no proof of
// work is asked for a place that cannot be had.
func TestLineFullAnswersFullWithARetryHint(t *testing.T) {
	e := newEnv(t)
	e.putRoom("small", `{"paused": true, "max_waiting": 2}`)
	for i := 0; i < 2; i++ {
		if r := e.do(e.browser(), "POST", "/api/rooms/small/enter", ""); r.body["state"] != "waiting" {
			t.Fatalf("entry %d: %s", i, r.raw)
		}
	}
	r := e.do(e.browser(), "POST", "/api/rooms/small/enter", "")
	if r.status != http.StatusOK || r.body["state"] != "full" || r.body["ticket"] != "" || r.body["retry_after_s"] != 15.0 {
		t.Fatalf("third: %d %s", r.status, r.raw)
	}
	if r.header.Get("Retry-After") != "15" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	e.putRoom("small", `{"paused": true, "max_waiting": 2, "bot_protection": {"proof_of_work": "on"}}`)
	if r := e.do(e.browser(), "POST", "/api/rooms/small/enter", ""); r.status != http.StatusOK || r.body["state"] != "full" {
		t.Fatalf("full line with proof of work on: %d %s", r.status, r.raw)
	}
}

// TestRandomLineHasNoPlaces: the ticket JSON of a random line names the
// method and shows no place or estimate.
func TestRandomLineHasNoPlaces(t *testing.T) {
	e := newEnv(t)
	e.putRoom("lottery", `{"paused": true, "queueing_method": "random"}`)
	r := e.do(e.browser(), "POST", "/api/rooms/lottery/enter", "")
	if r.body["state"] != "waiting" || r.body["queueing_method"] != "random" || r.body["position"] != 0.0 ||
		r.body["entry_position"] != 0.0 || r.body["eta_s"] != nil || r.body["waiting"] != 1.0 {
		t.Fatalf("random line: %s", r.raw)
	}
	e.putRoom("maint", `{"queueing_method": "reject"}`)
	r = e.do(e.browser(), "POST", "/api/rooms/maint/enter", "")
	if r.body["state"] != "closed" || r.body["reason"] != "maintenance" || r.body["ticket"] != "" {
		t.Fatalf("reject: %s", r.raw)
	}
}
