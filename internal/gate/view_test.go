package gate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// sameTicket checks that the gate's answer carries every field of the
// ticket as waitroom's status API shows it, with the same values.
func sameTicket(t *testing.T, what string, gate, api result) {
	t.Helper()
	if api.status != http.StatusOK || len(api.json) < 10 {
		t.Fatalf("%s: status API %d %s", what, api.status, api.body)
	}
	for k, want := range api.json {
		got, ok := gate.json[k]
		if !ok {
			t.Errorf("%s: the gate's answer lacks %q: %s", what, k, gate.body)
			continue
		}
		if k == "redirect_url" {
			// Each answer hands out a fresh hand-off code: the same target.
			got, want = withoutCode(got), withoutCode(want)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s: %s is %s at the gate, %s in the API", what, k, g, w)
		}
	}
}

func withoutCode(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	before, _, _ := strings.Cut(s, "wr_code=")
	return before
}

// TestGateAndAPIShowTheSameTicket: an API client held at the gate reads its
// ticket as the status API shows it (one view, queue.View): a waiter's
// place, estimate and pace, then an admitted ticket's token and turn.
func TestGateAndAPIShowTheSameTicket(t *testing.T) {
	f := newFixture(t, func(s *queue.Settings) { s.Capacity = 1 })
	ctx := context.Background()
	first, tok := f.admit("ffffffffffffffffffffffffffffffff") // the one slot

	c := browser() // an API client that keeps its cookies
	held := f.do(c, "POST", "/api/orders", "Accept: application/json")
	id, _ := held.json["ticket"].(string)
	if held.status != http.StatusTooManyRequests || held.json["state"] != "waiting" || id == "" {
		t.Fatalf("gate: %d %s, want 429 in line", held.status, held.body)
	}
	if held.json["eta_s"] == nil || held.json["eta_low_s"] == nil || held.json["next_update_ms"] == nil {
		t.Errorf("gate: no estimate or pace for a waiter in a moving line: %s", held.body)
	}
	sameTicket(t, "waiting", held, f.do(c, "GET", "/api/rooms/"+room+"/tickets/"+id))

	// The first turn starts and ends; the next tick admits the client,
	// whose turn starts 500 ms on.
	f.clock.Advance(time.Second)
	if v, err := f.line.Complete(ctx, tok, room); err != nil || !v.Valid {
		t.Fatalf("complete %s: %+v %v", first.ID, v, err)
	}
	s, err := f.line.Settings(ctx, room)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.line.Tick(ctx, room, &s); err != nil {
		t.Fatal(err)
	}
	early := f.do(c, "POST", "/api/orders", "Accept: application/json")
	if early.status != http.StatusTooEarly || early.json["state"] != "admitted" || early.json["token"] == nil || early.json["redirect_url"] == nil {
		t.Fatalf("gate: %d %s, want 425 with the admitted ticket", early.status, early.body)
	}
	sameTicket(t, "admitted", early, f.do(c, "GET", "/api/rooms/"+room+"/tickets/"+id))
}
