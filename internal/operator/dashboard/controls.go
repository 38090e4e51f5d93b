package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// controlFields are what the room page's controls may change; anything
// else in the form is ignored.
var controlFields = []string{"paused", "capacity", "batch_size", "batch_interval_ms", "activation", "sold_out"}

// handleControls: POST /admin/rooms/:room/controls changes pause, pace,
// capacity or activation over the stored settings, through the admin API's
// checks. Every server's admission loop re-reads the settings each tick, so
// the change takes effect within one tick; open dashboards are pushed at once.
// The script gets JSON; a form posted without script gets the page back.
func handleControls(d *Dashboard, rooms roomReader, w roomWriter) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, ok := roomParam(c)
		if !ok {
			return d.failErr(c, queue.ErrRoomNotFound)
		}
		ctx := c.Request().Context()
		cur, err := rooms.StoredSettings(ctx, room)
		if err != nil {
			return d.failErr(c, err)
		}
		form, err := c.FormParams()
		if err != nil {
			return d.failErr(c, fmt.Errorf("dashboard: read form: %w", err))
		}
		s, err := applyControls(cur, form)
		if err != nil {
			if wantsJSON(c) {
				return d.failErr(c, err)
			}
			field := "form"
			var fe *queue.FieldError
			if errors.As(err, &fe) {
				field = formField(fe.Field)
			}
			return d.roomPage(c, http.StatusBadRequest, map[string]string{field: formMessage(d.lang(c), err)}, false)
		}
		if err := w.PutRoom(ctx, room, s); err != nil {
			return d.failErr(c, fmt.Errorf("dashboard: apply controls: %w", err))
		}
		adminops.Log(d.log, c, adminops.BySession, adminops.SettingsChange(adminops.Controls, room, &cur, s))
		d.changed(ctx, room)
		if wantsJSON(c) {
			return c.JSON(http.StatusOK, s)
		}
		return c.Redirect(http.StatusSeeOther, templates.AdminRoomPath(room, "?saved=1"))
	}
}

// applyControls puts the control fields of form over cur as JSON and runs
// the admin API's checks on the result.
func applyControls(cur queue.Settings, form map[string][]string) (queue.Settings, error) {
	data, err := json.Marshal(cur)
	if err != nil {
		return queue.Settings{}, fmt.Errorf("dashboard: encode settings: %w", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return queue.Settings{}, fmt.Errorf("dashboard: decode settings: %w", err)
	}
	for _, name := range controlFields {
		vs, ok := form[name]
		if !ok || len(vs) == 0 {
			continue
		}
		v := strings.TrimSpace(vs[0])
		var raw json.RawMessage
		switch name {
		case "paused", "sold_out":
			raw, err = json.Marshal(v == "true")
		case "activation":
			raw, err = json.Marshal(v)
		default:
			if _, perr := strconv.ParseInt(v, 10, 64); perr == nil {
				raw = json.RawMessage(v)
			} else {
				raw, err = json.Marshal(v) // not a number: the check names the field
			}
		}
		if err != nil {
			return queue.Settings{}, fmt.Errorf("dashboard: encode %s: %w", name, err)
		}
		fields[name] = raw
	}
	data, err = json.Marshal(fields)
	if err != nil {
		return queue.Settings{}, fmt.Errorf("dashboard: encode settings: %w", err)
	}
	return queue.ParseSettings(data)
}

// handleDegrade: POST /admin/degrade mode=on|auto forces degraded mode on
// for a drill, or ends the drill (back to the Redis checks; "off", from
// older forms, ends it too: normal mode is never forced). As the admin
// API's POST /admin/api/degrade, it applies here at once and reaches the
// other servers through Redis when Redis answers.
func handleDegrade(d *Dashboard, avail Availability, store adminops.DrillStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		if avail == nil {
			return d.fail(c, http.StatusNotFound, apiError{Code: "not_found", Message: "this server has no degraded mode",
				Text: templates.T(d.lang(c), "admin.error.no_degrade")})
		}
		var on *bool
		switch mode := c.FormValue("mode"); mode {
		case "on":
			b := true
			on = &b
		case "auto", "off":
		default:
			return d.fail(c, http.StatusBadRequest, apiError{Code: "invalid", Field: "mode", Message: "mode: must be on or auto",
				Text: templates.T(d.lang(c), "admin.error.bad_request")})
		}
		st := adminops.SetDrill(c.Request().Context(), avail, store, on)
		adminops.Log(d.log, c, adminops.BySession, adminops.DrillChange(on, st))
		d.hub.NotifyAll()
		if wantsJSON(c) {
			return c.JSON(http.StatusOK, st)
		}
		return c.Redirect(http.StatusSeeOther, safeNext(c.FormValue("back")))
	}
}
