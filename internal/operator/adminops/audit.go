package adminops

import (
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
)

// Who made a change: the admin API's bearer token or a dashboard session.
const (
	ByAdminToken = "admin_token"
	BySession    = "session"
)

// What kind of change (SoldOut is in sold_out.go).
const (
	Created  = "created"
	Saved    = "saved"
	Controls = "controls"
	Deleted  = "deleted"
	Drill    = "drill"
	Opened   = "opened" // "open now": the scheduled opening moved to now
)

// AuditMessage is the message of every change's log line, whichever front
// end made it: one search finds them all.
const AuditMessage = "admin: change"

// Change is one operator change, for its audit line.
type Change struct {
	Room string // empty for a change to every room (a drill)
	What string // Created, Saved, Controls, Deleted, Drill, Opened
	// Fields are the settings that differ, by name only: a secret's value
	// never reaches the log.
	Fields []string
	// Attrs are the new values worth reading in the log.
	Attrs []slog.Attr
}

// loggedValues are the settings whose new values an audit line shows when
// they change: the controls of a sale, short and never secret.
var loggedValues = []string{"paused", "capacity", "batch_size", "batch_interval_ms", "activation",
	"queueing_method", "sold_out", "max_waiting"}

// SettingsChange is the change from old (nil for a new room) to s: the
// fields that differ and the new values of the controls among them.
func SettingsChange(what, room string, old *queue.Settings, s queue.Settings) Change {
	ch := Change{Room: room, What: what}
	now := settingsFields(s)
	var before map[string]json.RawMessage
	if old != nil {
		before = settingsFields(*old)
	}
	for name, v := range now {
		if b, ok := before[name]; old != nil && ok && string(b) == string(v) {
			continue
		}
		ch.Fields = append(ch.Fields, name)
	}
	for name := range before {
		if _, ok := now[name]; !ok {
			ch.Fields = append(ch.Fields, name) // left out: back to its default
		}
	}
	slices.Sort(ch.Fields)
	for _, name := range loggedValues {
		if !slices.Contains(ch.Fields, name) {
			continue
		}
		var v any
		if json.Unmarshal(now[name], &v) == nil {
			ch.Attrs = append(ch.Attrs, slog.Any(name, v))
		}
	}
	return ch
}

// OpenedNow is the change of "open now": room's opening moved to at.
func OpenedNow(room string, at time.Time) Change {
	return Change{Room: room, What: Opened, Fields: []string{"opens_at"}, Attrs: []slog.Attr{slog.Time("opens_at", at)}}
}

// settingsFields is s as the admin API shows it, field by field.
func settingsFields(s queue.Settings) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if data, err := json.Marshal(s); err == nil {
		_ = json.Unmarshal(data, &m)
	}
	return m
}

// Log writes the audit line of a change: room, who (ByAdminToken or
// BySession), what, the fields changed and their shown values, the
// request's id (X-Request-Id, set by the access log) and the client.
func Log(log *slog.Logger, c echo.Context, by string, ch Change) {
	attrs := []any{
		slog.String("room", ch.Room),
		slog.String("by", by),
		slog.String("what", ch.What),
		slog.Any("fields", ch.Fields),
		slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
		slog.String("remote", c.RealIP()),
	}
	if len(ch.Attrs) > 0 {
		attrs = append(attrs, slog.Group("to", attrsAny(ch.Attrs)...))
	}
	log.Info(AuditMessage, attrs...)
}

func attrsAny(as []slog.Attr) []any {
	out := make([]any, len(as))
	for i, a := range as {
		out[i] = a
	}
	return out
}
