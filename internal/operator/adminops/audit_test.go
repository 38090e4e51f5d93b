package adminops

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

func TestSettingsChange(t *testing.T) {
	old := queue.DefaultSettings()
	s := old
	s.Paused, s.Capacity, s.Title, s.UserSecret = true, old.Capacity+5, queue.Text("Drop"), "a-secret-of-more-than-16"
	ch := SettingsChange(Saved, "drop", &old, s)
	if !slices.Equal(ch.Fields, []string{"capacity", "paused", "title", "user_secret"}) {
		t.Fatalf("fields %v", ch.Fields)
	}
	// Values only of the controls: not the title, never the secret.
	var names []string
	for _, a := range ch.Attrs {
		names = append(names, a.Key)
	}
	if !slices.Equal(names, []string{"paused", "capacity"}) {
		t.Fatalf("values shown for %v", names)
	}
	if ch := SettingsChange(Saved, "drop", &old, old); len(ch.Fields) != 0 || len(ch.Attrs) != 0 {
		t.Fatalf("no change: %+v", ch)
	}
	// A field left out goes back to its default: it changed too.
	if ch := SettingsChange(Saved, "drop", &s, old); !slices.Contains(ch.Fields, "user_secret") {
		t.Fatalf("secret removed: fields %v", ch.Fields)
	}
	if ch := SettingsChange(Created, "drop", nil, old); len(ch.Fields) == 0 {
		t.Fatal("a new room changes every field it has")
	}
}

func TestLogLine(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	e := echo.New()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPut, "/admin/api/rooms/drop", nil)
	c := e.NewContext(req, rec)
	c.Response().Header().Set(echo.HeaderXRequestID, "req-1")
	old := queue.DefaultSettings()
	s := old
	s.Paused = true
	Log(log, c, ByAdminToken, SettingsChange(Saved, "drop", &old, s))
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	to, _ := m["to"].(map[string]any)
	if m["msg"] != AuditMessage || m["room"] != "drop" || m["by"] != ByAdminToken || m["what"] != Saved ||
		m["request_id"] != "req-1" || m["remote"] != "192.0.2.1" || to["paused"] != true {
		t.Fatalf("line %s", strings.TrimSpace(buf.String()))
	}
}

func TestDrillMode(t *testing.T) {
	on, off := true, false
	for want, v := range map[string]*bool{"on": &on, "auto": nil} {
		if got := DrillMode(v); got != want {
			t.Errorf("DrillMode = %q, want %q", got, want)
		}
	}
	if got := DrillMode(&off); got != "auto" {
		t.Errorf("DrillMode(false) = %q: normal mode is never forced", got)
	}
}
