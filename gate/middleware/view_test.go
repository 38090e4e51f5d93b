package middleware_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// TestMiddlewareShowsTheTicketAsTheAPIDoes: an API client held by the
// middleware reads every field of its ticket as waitroom's status API
// shows it (queue.View, read from waitroom's enter and passed on).
func TestMiddlewareShowsTheTicketAsTheAPIDoes(t *testing.T) {
	f := newFixture(t, "net/http", func(s *queue.Settings) { s.Capacity = 1 }, nil)
	f.admit("ffffffffffffffffffffffffffffffff") // the one slot
	held := f.do(jarClient(), "POST", "/api/orders", "Accept: application/json")
	id, _ := held.json["ticket"].(string)
	vc := cookie(held, "wr_vid")
	if held.status != http.StatusTooManyRequests || held.json["state"] != "waiting" || id == "" || vc == nil {
		t.Fatalf("middleware: %d %s, want 429 in line with a visitor cookie", held.status, held.body)
	}
	req, err := http.NewRequest(http.MethodGet, f.wr+"/api/rooms/"+room+"/tickets/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "wr_vid", Value: vc.Value}) // the id the middleware entered under
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var api map[string]any
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &api) != nil || len(api) < 10 {
		t.Fatalf("status API: %d %s", res.StatusCode, body)
	}
	if api["eta_s"] == nil {
		t.Errorf("no estimate for a waiter in a moving line: %s", body)
	}
	for k, want := range api {
		g, _ := json.Marshal(held.json[k])
		w, _ := json.Marshal(want)
		if _, ok := held.json[k]; !ok || string(g) != string(w) {
			t.Errorf("%s is %s at the middleware, %s in the API", k, g, w)
		}
	}
}
