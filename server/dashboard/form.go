package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// A form is turned into the admin API's JSON and put through the same
// checks (queue.ParseSettings), so a message next to a field is the one the
// API would answer. Those checks stop at the first bad field; to show every
// bad field at once, the field at fault is dropped (it then takes its
// default, which passes) and the rest checked again.

// formSettings reads the settings fields of a room form over cur (the
// stored settings when editing, for the user secret only). It returns the
// settings, or the messages by form field.
func formSettings(form url.Values, cur *queue.Settings) (queue.Settings, map[string]string) {
	errs := map[string]string{}
	fields := map[string]json.RawMessage{}
	for _, name := range templates.AdminFieldNames {
		raw, err := fieldJSON(name, form, cur)
		if err != nil {
			errs[name] = err.Error()
			continue
		}
		if raw != nil {
			fields[name] = raw
		}
	}
	s, checkErrs := checkSettings(fields)
	for k, v := range checkErrs {
		if errs[k] == "" {
			errs[k] = v
		}
	}
	if len(errs) > 0 {
		return queue.Settings{}, errs
	}
	return s, nil
}

// checkSettings runs the admin API's checks over fields, collecting the
// message of each bad field.
func checkSettings(fields map[string]json.RawMessage) (queue.Settings, map[string]string) {
	errs := map[string]string{}
	for range len(fields) + 1 {
		data, err := json.Marshal(fields)
		if err != nil {
			errs["form"] = err.Error()
			return queue.Settings{}, errs
		}
		s, err := queue.ParseSettings(data)
		if err == nil {
			if len(errs) > 0 {
				return queue.Settings{}, errs
			}
			return s, nil
		}
		var fe *queue.FieldError
		if !errors.As(err, &fe) {
			errs["form"] = err.Error()
			return queue.Settings{}, errs
		}
		key := formField(fe.Field)
		if errs[key] == "" {
			errs[key] = fe.Error()
		}
		if _, ok := fields[key]; !ok {
			return queue.Settings{}, errs // nothing left to drop: report what we have
		}
		delete(fields, key)
	}
	return queue.Settings{}, errs
}

// formField is the form field a settings field belongs to:
// "tiers[1].interval_ms" is the tiers box, "adaptive.open_at" the adaptive one.
func formField(field string) string {
	if i := strings.IndexAny(field, ".["); i > 0 {
		field = field[:i]
	}
	for _, name := range templates.AdminFieldNames {
		if name == field {
			return name
		}
	}
	return "form"
}

// fieldJSON is one form field as the API's JSON: nil leaves it out, so an
// empty field takes its default, as a field left out of the API does. Numbers that are not numbers go through as strings, so
// the API's own check names them.
func fieldJSON(name string, form url.Values, cur *queue.Settings) (json.RawMessage, error) {
	v := form.Get(name)
	switch name {
	case "capacity", "batch_size", "batch_interval_ms", "jitter_ms", "session_ttl_s", "abandon_after_s", "max_quantity":
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, nil
		}
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return json.RawMessage(v), nil
		}
		return json.Marshal(v)
	case "paused":
		return json.Marshal(v == "true" || v == "on")
	case "tiers", "adaptive", "bot_protection":
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, nil
		}
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("%s: is not valid JSON", name)
		}
		return json.RawMessage(v), nil
	case "ends_at":
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, fmt.Errorf("ends_at: must be an RFC 3339 time such as 2030-01-02T15:04:05Z")
		}
		return json.Marshal(t)
	case "user_secret":
		// A secret is never shown again: empty keeps the stored one.
		if v == "" && cur != nil && form.Get("user_secret_clear") != "true" {
			v = cur.UserSecret
		}
		return json.Marshal(v)
	case "title", "message":
		if v == "" {
			return nil, nil
		}
		return json.Marshal(v)
	case "allowed_embedders":
		// Origins, separated by commas or spaces; the API checks each.
		origins := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
		if len(origins) == 0 {
			return nil, nil
		}
		return json.Marshal(origins)
	}
	if v = strings.TrimSpace(v); v == "" {
		return nil, nil // as its placeholder says: the default
	}
	return json.Marshal(v)
}

// settingsValues are stored settings as the form shows them.
func settingsValues(s queue.Settings) map[string]string {
	v := map[string]string{
		"title": s.Title, "message": s.Message, "target_url": s.TargetURL,
		"capacity":          strconv.FormatInt(s.Capacity, 10),
		"batch_size":        strconv.FormatInt(s.BatchSize, 10),
		"batch_interval_ms": strconv.FormatInt(s.BatchIntervalMS, 10),
		"jitter_ms":         strconv.FormatInt(s.JitterMS, 10),
		"session_ttl_s":     strconv.FormatInt(s.SessionTTLS, 10),
		"abandon_after_s":   strconv.FormatInt(s.AbandonAfterS, 10),
		"activation":        s.Activation, "paused": strconv.FormatBool(s.Paused),
		"theme_color": s.ThemeColor, "logo_url": s.LogoURL,
		"product_id": s.ProductID, "product_name": s.ProductName,
		"allowed_embedders": strings.Join(s.AllowedEmbedders, ", "),
	}
	if s.MaxQuantity > 0 {
		v["max_quantity"] = strconv.FormatInt(s.MaxQuantity, 10)
	}
	if b, err := json.Marshal(s.BotProtection); err == nil {
		v["bot_protection"] = string(b)
	}
	if s.EndsAt != nil {
		v["ends_at"] = s.EndsAt.UTC().Format(time.RFC3339)
	}
	if b, err := json.Marshal(s.Tiers); err == nil {
		v["tiers"] = string(b)
	}
	if s.Adaptive != nil {
		if b, err := json.Marshal(s.Adaptive); err == nil {
			v["adaptive"] = string(b)
		}
	}
	return v
}

// formValues are the inputs as typed, to show them again with the messages.
func formValues(form url.Values) map[string]string {
	v := map[string]string{"room": form.Get("room")}
	for _, name := range templates.AdminFieldNames {
		if name != "user_secret" {
			v[name] = form.Get(name)
		}
	}
	if v["paused"] == "on" {
		v["paused"] = "true"
	}
	return v
}

// defaultValues are the placeholders of empty fields: what they become.
func defaultValues() map[string]string {
	v := settingsValues(queue.DefaultSettings())
	for _, k := range []string{"title", "message", "paused", "activation", "tiers"} {
		delete(v, k)
	}
	v["ends_at"] = "2030-01-02T15:04:05Z"
	return v
}
