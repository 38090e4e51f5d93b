package server_test

import "testing"

// TestTicketWaitEstimate: eta_s comes with its range, follows a change of
// pace at once, and is null, range and all, while the room is paused.
func TestTicketWaitEstimate(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"batch_size": 1, "batch_interval_ms": 4000}`)
	e.do(e.browser(), "POST", "/api/rooms/sale/enter", "") // admitted at once
	e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
	carol := e.browser()
	r := e.do(carol, "POST", "/api/rooms/sale/enter", "")
	id, _ := r.body["ticket"].(string)
	eta := func(r resp) (low, point, high any) { return r.body["eta_low_s"], r.body["eta_s"], r.body["eta_high_s"] }

	low, point, high := eta(r)
	if point != 8.0 {
		t.Fatalf("#2 at one per 4 s: eta_s %v, want 8: %s", point, r.raw)
	}
	if l, h := low.(float64), high.(float64); !(l < 8 && h > 8) {
		t.Errorf("before any measure the range %v–%v must hold 8 with room either side", low, high)
	}

	e.putRoom("sale", `{"batch_size": 1, "batch_interval_ms": 4000, "paused": true}`)
	r = e.do(carol, "GET", "/api/rooms/sale/tickets/"+id, "")
	if low, point, high := eta(r); low != nil || point != nil || high != nil || r.body["paused"] != true {
		t.Errorf("paused: %s, want eta_s, eta_low_s and eta_high_s null", r.raw)
	}

	e.putRoom("sale", `{"batch_size": 2, "batch_interval_ms": 1000}`)
	r = e.do(carol, "GET", "/api/rooms/sale/tickets/"+id, "")
	if _, point, _ := eta(r); point != 1.0 {
		t.Errorf("after a speed-up to 2/s, #2 reads eta_s %v, want 1: %s", point, r.raw)
	}
}
