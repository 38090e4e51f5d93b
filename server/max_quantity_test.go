package server_test

import (
	"net/http"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// TestDegradedMaxQuantityDefaults (issue 22): a room that says nothing of
// max_quantity caps an intent at queue.DefaultMaxQuantity (4), by API and
// by the accept page's select; 0 set on purpose is kept (the stored JSON
// says 0, not "left out") and caps nothing.
func TestDegradedMaxQuantityDefaults(t *testing.T) {
	t.Parallel()
	e := drillEnv(t, "", nil)
	vs := e.before(3)
	e.degrade(`{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off"}}`)
	if got := e.admin("GET", "/admin/api/rooms/sale", "").body["max_quantity"]; got != float64(queue.DefaultMaxQuantity) {
		t.Fatalf("max_quantity of a room that set none: %v, want %d", got, queue.DefaultMaxQuantity)
	}
	for _, q := range []string{"5", "1000000"} {
		r := e.do(vs[0], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": `+q+`}}`)
		wantError(t, r, http.StatusBadRequest, "invalid")
	}
	if r := e.do(vs[0], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 4}}`); r.status != 202 {
		t.Fatalf("quantity 4: %d %s", r.status, r.raw)
	}
	_, doc := e.page(vs[1], "/rooms/sale/accept")
	if n := testid(doc, "accept-quantity").Find("option").Length(); n != 4 {
		t.Errorf("accept page: %d quantities offered, want 4", n)
	}

	e.putRoom("sale", `{"paused": true, "product_id": "sneaker-drop", "max_quantity": 0, "bot_protection": {"proof_of_work": "off"}}`)
	if got := e.admin("GET", "/admin/api/rooms/sale", "").body["max_quantity"]; got != 0.0 {
		t.Fatalf("max_quantity 0 read back as %v", got)
	}
	if r := e.do(vs[2], "POST", "/api/rooms/sale/intents", `{"payload": {"quantity": 1000}}`); r.status != 202 {
		t.Fatalf("no cap, quantity 1000: %d %s", r.status, r.raw)
	}
}
