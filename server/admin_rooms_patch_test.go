package server_test

import "testing"

// TestPatchChangesOnlyTheNamedFields: PATCH is a JSON merge patch (RFC
// 7396): a partial body leaves the rest of the room as it was (a partial PUT
// resets it), null resets a field to its default, nested objects merge, and
// an invalid result names its field and changes nothing.
func TestPatchChangesOnlyTheNamedFields(t *testing.T) {
	e := newEnv(t)
	e.admin("PUT", "/admin/api/rooms/sale", `{"capacity": 7, "title": "Drop", "target_url": "https://shop.test/checkout",
		"opens_at": "2030-01-01T10:00:00Z", "bot_protection": {"proof_of_work": "off"}}`)

	r := e.admin("PATCH", "/admin/api/rooms/sale", `{"paused": true}`)
	if r.status != 200 || r.body["paused"] != true || r.body["capacity"] != 7.0 || r.body["title"] != "Drop" ||
		r.body["target_url"] != "https://shop.test/checkout" || r.body["opens_at"] == nil {
		t.Fatalf("pause by PATCH: %d %s", r.status, r.raw)
	}
	got := e.admin("GET", "/admin/api/rooms/sale", "")
	if got.body["paused"] != true || got.body["title"] != "Drop" || got.body["capacity"] != 7.0 {
		t.Fatalf("stored after PATCH: %s", got.raw)
	}
	if bp, _ := got.body["bot_protection"].(map[string]any); bp["proof_of_work"] != "off" {
		t.Fatalf("a nested object lost by PATCH: %s", got.raw)
	}

	// null resets to the default.
	r = e.admin("PATCH", "/admin/api/rooms/sale", `{"title": null, "capacity": null}`)
	if r.status != 200 || r.body["title"] != "" || r.body["capacity"] != 100.0 || r.body["paused"] != true {
		t.Fatalf("null resets: %d %s", r.status, r.raw)
	}

	// An invalid patch names the field, and nothing changes.
	wantField := func(r resp, field string) {
		t.Helper()
		if e, _ := r.body["error"].(map[string]any); r.status != 400 || e["field"] != field {
			t.Fatalf("want a 400 naming %s: %d %s", field, r.status, r.raw)
		}
	}
	wantField(e.admin("PATCH", "/admin/api/rooms/sale", `{"capacity": -1}`), "capacity")
	wantField(e.admin("PATCH", "/admin/api/rooms/sale", `{"opens_at": "tomorrow"}`), "opens_at")
	if got := e.admin("GET", "/admin/api/rooms/sale", ""); got.body["capacity"] != 100.0 || got.body["opens_at"] == nil {
		t.Fatalf("a refused PATCH changed the room: %s", got.raw)
	}
	for _, body := range []string{`[]`, `"paused"`, `null`, `{`} {
		wantError(t, e.admin("PATCH", "/admin/api/rooms/sale", body), 400, "invalid")
	}
	wantError(t, e.admin("PATCH", "/admin/api/rooms/nope", `{"paused": true}`), 404, "room_not_found")
	if r := e.do(nil, "PATCH", "/admin/api/rooms/sale", `{"paused": false}`); r.status != 401 {
		t.Fatalf("PATCH without the admin token: %d %s", r.status, r.raw)
	}
}
