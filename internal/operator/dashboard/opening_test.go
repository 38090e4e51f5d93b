package dashboard_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/internal/operator/dashboard"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestOpenNowFromTheRoomPage: the room page shows the scheduled opening and
// its pre-queue; "open now" needs the CSRF token, moves the opening to now
// (logged as the admin API's), and once the tick drew, the page shows the
// draw's record instead of the button.
func TestOpenNowFromTheRoomPage(t *testing.T) {
	logs := &auditLog{}
	site := newSite(t, siteOptions{deps: func(d *dashboard.Deps) { d.Logger = slog.New(slog.NewJSONHandler(logs, nil)) }})
	s := queue.DefaultSettings()
	opens := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	s.OpensAt = &opens
	site.putRoom("drop", s)
	ctx := context.Background()
	for _, who := range []string{"v:a", "v:b"} {
		if tk, _, err := site.line.Enter(ctx, "drop", who); err != nil || tk.State != vocab.StateScheduled {
			t.Fatalf("enter %s: %+v %v", who, tk, err)
		}
	}
	b := site.browser()
	b.signIn()
	logs.take(t)

	p := b.get("/admin/rooms/drop")
	if p.status != http.StatusOK || byTestID(t, p, "opening-scheduled") != "2" ||
		byTestID(t, p, "opening-draw") != templates.T(templates.English, "admin.opening.none") || !shown(p, "open-now") {
		t.Fatalf("room page before the opening: %d %q %q", p.status, byTestID(t, p, "opening-scheduled"), byTestID(t, p, "opening-draw"))
	}

	// Without the CSRF token: refused, nothing changed, nothing logged.
	if p := b.post("/admin/rooms/drop/open", url.Values{}); p.status != http.StatusForbidden {
		t.Fatalf("open now without CSRF: %d", p.status)
	}
	if got := site.getRoom("drop"); got.OpensAt == nil || !got.OpensAt.Equal(opens) || len(logs.take(t)) != 0 {
		t.Fatalf("a refused open now changed the room: %v", got.OpensAt)
	}

	p = b.postForm("/admin/rooms/drop/open", nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/admin/rooms/drop?saved=1" {
		t.Fatalf("open now: %d %q", p.status, p.header.Get("Location"))
	}
	got := site.getRoom("drop")
	if got.OpensAt == nil || got.OpensAt.After(time.Now()) {
		t.Fatalf("opens_at after open now: %v", got.OpensAt)
	}
	as := logs.take(t)
	if len(as) != 1 || as[0]["what"] != adminops.Opened || as[0]["by"] != adminops.BySession || as[0]["room"] != "drop" {
		t.Fatalf("open now: audit lines %v", as)
	}
	if p := b.postForm("/admin/rooms/drop/open", nil); p.status != http.StatusConflict || !strings.Contains(p.body, "not_scheduled") && p.doc == nil {
		t.Fatalf("open now twice: %d %.200s", p.status, p.body)
	}

	if _, err := site.line.Tick(ctx, "drop", &got); err != nil {
		t.Fatal(err)
	}
	p = b.get("/admin/rooms/drop")
	if d := byTestID(t, p, "opening-draw"); !strings.HasPrefix(d, "2 drawn at ") || shown(p, "open-now") || len(byTestID(t, p, "opening-hash")) != 64 {
		t.Fatalf("room page after the draw: %q, open now shown %v", d, shown(p, "open-now"))
	}
}
