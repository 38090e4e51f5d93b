package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/httpkit/render"
	"github.com/waitroom/waitroom/internal/operator/adminops"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// roomReader reads a room's settings.
type roomReader interface {
	StoredSettings(ctx context.Context, room string) (queue.Settings, error)
}

// roomWriter stores a room's settings through the line.
type roomWriter interface {
	PutRoom(ctx context.Context, room string, s queue.Settings) error
}

// handleCreatePage: GET /admin/create, the empty form.
func (d *Dashboard) handleCreatePage(c echo.Context) error {
	_, tiers := settingsValues(queue.DefaultSettings())
	return d.formPage(c, http.StatusOK, templates.AdminRoomFormProps{
		Create: true, Values: map[string]string{"activation": string(queue.ActivationAlways)}, Tiers: tiers,
	})
}

func (d *Dashboard) formPage(c echo.Context, status int, p templates.AdminRoomFormProps) error {
	p.AdminPage = d.page(c)
	p.Defaults = defaultValues()
	return render.Page(c, status, templates.AdminRoomFormPage(p))
}

// checkRoomID is the admin API's check of a new room's id, plus "is it
// free", said in lang.
func checkRoomID(ctx context.Context, rooms roomReader, room string, lang templates.Lang) (string, error) {
	if !queue.ValidRoomID(room) {
		return templates.T(lang, "admin.rule.room_id"), nil
	}
	_, err := rooms.StoredSettings(ctx, room)
	switch {
	case err == nil:
		return templates.T(lang, "admin.rule.room_taken"), nil
	case errors.Is(err, queue.ErrRoomNotFound):
		return "", nil
	}
	return "", fmt.Errorf("dashboard: check room id: %w", err)
}

// handleCreate: POST /admin/create makes a new room; a bad field comes back
// with the form and its message.
func handleCreate(d *Dashboard, rooms roomReader, w roomWriter) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		form, err := c.FormParams()
		if err != nil {
			return d.failErr(c, fmt.Errorf("dashboard: read form: %w", err))
		}
		room := form.Get("room")
		lang := d.lang(c)
		s, errs := formSettings(form, nil, lang)
		idErr, err := checkRoomID(ctx, rooms, room, lang)
		if err != nil {
			return d.failErr(c, err)
		}
		if idErr != "" {
			if errs == nil {
				errs = map[string]string{}
			}
			errs["room"] = idErr
		}
		if len(errs) > 0 {
			values, tiers := formValues(form)
			return d.formPage(c, http.StatusBadRequest, templates.AdminRoomFormProps{
				Create: true, Room: room, Values: values, Tiers: tiers, Errors: errs, FormError: errs["form"],
			})
		}
		if err := w.PutRoom(ctx, room, s); err != nil {
			return d.failErr(c, fmt.Errorf("dashboard: create room: %w", err))
		}
		adminops.Log(d.log, c, adminops.BySession, adminops.SettingsChange(adminops.Created, room, nil, s))
		d.changed(ctx, room)
		return c.Redirect(http.StatusSeeOther, templates.AdminRoomPath(room, ""))
	}
}

// handleEditPage: GET /admin/rooms/:room/edit, the form with the stored settings.
func handleEditPage(d *Dashboard, rooms roomReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, ok := roomParam(c)
		if !ok {
			return d.failErr(c, queue.ErrRoomNotFound)
		}
		s, err := rooms.StoredSettings(c.Request().Context(), room)
		if err != nil {
			return d.failErr(c, err)
		}
		values, tiers := settingsValues(s)
		return d.formPage(c, http.StatusOK, templates.AdminRoomFormProps{
			Room: room, Values: values, Tiers: tiers, HasSecret: s.UserSecret != "",
		})
	}
}

// handleEdit: POST /admin/rooms/:room/edit replaces the settings; the
// admission loops apply them within one tick.
func handleEdit(d *Dashboard, rooms roomReader, w roomWriter) echo.HandlerFunc {
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
		s, errs := formSettings(form, &cur, d.lang(c))
		if len(errs) > 0 {
			values, tiers := formValues(form)
			return d.formPage(c, http.StatusBadRequest, templates.AdminRoomFormProps{
				Room: room, Values: values, Tiers: tiers, Errors: errs, FormError: errs["form"], HasSecret: cur.UserSecret != "",
			})
		}
		if err := w.PutRoom(ctx, room, s); err != nil {
			return d.failErr(c, fmt.Errorf("dashboard: save room: %w", err))
		}
		adminops.Log(d.log, c, adminops.BySession, adminops.SettingsChange(adminops.Saved, room, &cur, s))
		d.changed(ctx, room)
		return c.Redirect(http.StatusSeeOther, templates.AdminRoomPath(room, "?saved=1"))
	}
}

// handleValidate: POST /admin/validate answers {"errors": {field: message}}
// for a room form as typed so far, for the script to show while typing.
// With room set (the create form) it checks the id as well.
func handleValidate(d *Dashboard, rooms roomReader) echo.HandlerFunc {
	return func(c echo.Context) error {
		lang := d.lang(c)
		form, err := c.FormParams()
		if err != nil {
			return c.JSON(http.StatusBadRequest, map[string]apiError{"error": {Code: "invalid", Message: "unreadable form", Text: templates.T(lang, "admin.error.bad_request")}})
		}
		ctx := c.Request().Context()
		// An empty secret passes either way: keeping the stored one needs no look.
		_, errs := formSettings(form, nil, lang)
		if errs == nil {
			errs = map[string]string{}
		}
		if form.Has("room") {
			idErr, err := checkRoomID(ctx, rooms, form.Get("room"), lang)
			if err == nil && idErr != "" {
				errs["room"] = idErr
			}
		}
		return c.JSON(http.StatusOK, map[string]any{"errors": errs})
	}
}
