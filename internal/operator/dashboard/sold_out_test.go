package dashboard_test

import (
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestSoldOutControl: the room page's sold out button ends the sale and
// undoes it, with the session's CSRF token only, and each change is logged
// with its new value.
func TestSoldOutControl(t *testing.T) {
	logs := &auditLog{}
	site := newSite(t, siteOptions{deps: func(d *dashboard.Deps) { d.Logger = slog.New(slog.NewJSONHandler(logs, nil)) }})
	site.putRoom("drop", queue.DefaultSettings())
	b := site.browser()
	b.signIn()
	logs.take(t)

	// Without the CSRF token: refused, nothing changes.
	if p := b.post("/admin/rooms/drop/controls", url.Values{"sold_out": {"true"}}, "Accept", "application/json"); p.status != http.StatusForbidden {
		t.Fatalf("without CSRF: %d", p.status)
	}
	if site.getRoom("drop").SoldOut {
		t.Fatal("a control without its CSRF token marked the room sold out")
	}

	p := b.postForm("/admin/rooms/drop/controls", url.Values{"sold_out": {"true"}})
	if p.status != http.StatusSeeOther || !site.getRoom("drop").SoldOut {
		t.Fatalf("sold out: %d", p.status)
	}
	as := logs.take(t)
	if len(as) != 1 || as[0]["what"] != adminops.Controls || as[0]["by"] != adminops.BySession {
		t.Fatalf("audit lines %v", as)
	}
	if to, _ := as[0]["to"].(map[string]any); to["sold_out"] != true {
		t.Fatalf("audit line's new values %v", as[0]["to"])
	}
	p = b.get("/admin/rooms/drop")
	if byTestID(t, p, "control-sold-out") != templates.T(templates.English, "admin.soldout.off") || !shown(p, "control-sold-out-state") {
		t.Errorf("sold out room page shows %q", byTestID(t, p, "control-sold-out"))
	}

	// Undo: the same button, now saying so.
	if p := b.post("/admin/rooms/drop/controls", url.Values{"sold_out": {"false"}}, "Accept", "application/json", "X-CSRF-Token", b.csrf); p.status != http.StatusOK || site.getRoom("drop").SoldOut {
		t.Fatalf("undo: %d %s", p.status, p.body)
	}
	if to, _ := logs.take(t)[0]["to"].(map[string]any); to["sold_out"] != false {
		t.Fatalf("undo's audit line %v", to)
	}
}
