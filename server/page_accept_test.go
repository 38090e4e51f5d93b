package server_test

import (
	"net/http"
	"testing"

	"github.com/waitroom/waitroom/templates"
)

// TestAcceptPageUnknownIntent: in degraded mode the accept page asked for an
// intent this visitor has none of (a made-up id, a malformed one, someone
// else's) answers 404 with "unknown request" in the page's language, not
// "room not found"; the visitor's own intent still shows, and a room that
// does not exist is still "room not found".
func TestAcceptPageUnknownIntent(t *testing.T) {
	t.Parallel()
	e := drillEnv(t, `{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off"}}`, nil)
	owner, stranger := e.before(2)[0], e.browser()
	e.degrade(`{"paused": true, "product_id": "sneaker-drop", "bot_protection": {"proof_of_work": "off"}}`)
	r := e.do(owner, "POST", "/api/rooms/sale/intents", `{"payload": {"product": "sneaker-drop", "quantity": 1}}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("intent: %d %s", r.status, r.raw)
	}
	id, _ := r.body["intent_id"].(string)

	for _, c := range []struct {
		name, path, lang string
		who              *http.Client
	}{
		{"made up", "/rooms/sale/accept?intent=0123456789abcdef0123456789abcdef&lang=ko", "ko", owner},
		{"malformed", "/rooms/sale/accept?intent=%3Cscript%3E&lang=en", "en", owner},
		{"someone else's", "/rooms/sale/accept?intent=" + id + "&lang=ko", "ko", stranger},
	} {
		t.Run(c.name, func(t *testing.T) {
			lang := templates.Lang(c.lang)
			res, doc := e.page(c.who, c.path)
			if res.StatusCode != http.StatusNotFound {
				t.Errorf("status %d, want 404", res.StatusCode)
			}
			if got := testid(doc, "intent-unknown").Find("h2").Text(); got != templates.T(lang, "accept.unknown.heading") {
				t.Errorf("heading %q, want %q", got, templates.T(lang, "accept.unknown.heading"))
			}
			if testid(doc, "not-found").Length() != 0 || testid(doc, "intent").Length() != 0 {
				t.Error("the page says the room is missing, or shows an intent")
			}
			if l, _ := doc.Find("html").Attr("lang"); l != c.lang {
				t.Errorf("html lang %q, want %q", l, c.lang)
			}
		})
	}

	res, doc := e.page(owner, "/rooms/sale/accept?intent="+id+"&lang=en")
	if res.StatusCode != http.StatusOK || testid(doc, "intent").Length() != 1 || testid(doc, "intent-unknown").Length() != 0 {
		t.Errorf("the owner's own intent: %d, intent block %d", res.StatusCode, testid(doc, "intent").Length())
	}
	res, doc = e.page(owner, "/rooms/nope/accept?intent="+id)
	if res.StatusCode != http.StatusNotFound || testid(doc, "not-found").Length() != 1 {
		t.Errorf("a missing room: %d, not-found block %d", res.StatusCode, testid(doc, "not-found").Length())
	}
}
