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
// checks (queue.ParseSettings), so a message next to a field says what the
// API would answer, in the page's language (templates.AdminFieldMessage). Those checks stop at the first bad field; to show every
// bad field at once, the field at fault is dropped (it then takes its
// default, which passes) and the rest checked again. Which inputs exist and
// how each is read come from queue.SettingFields.

// formDateTime is the form's date and time: a datetime-local input, in UTC.
const formDateTime = "2006-01-02T15:04"

// formFields are the settings as JSON values by field; a group is a
// map[string]json.RawMessage of its members.
type formFields map[string]any

// errDateTime is a date input that is not a date: the form's own check.
var errDateTime = errors.New("dashboard: not a date and time")

// formSettings reads the settings fields of a room form over cur (the
// stored settings when editing, for the user secret only). It returns the
// settings, or the messages in lang by form field.
func formSettings(form url.Values, cur *queue.Settings, lang templates.Lang) (queue.Settings, map[string]string) {
	errs := map[string]string{}
	fields := formFields{}
	for _, f := range queue.SettingFields {
		if f.Kind == queue.KindGroup {
			group := map[string]json.RawMessage{}
			for _, m := range f.Fields {
				raw, err := fieldJSON(m, form, cur)
				if err != nil {
					errs[m.Name] = formMessage(lang, err)
				} else if raw != nil {
					group[m.JSONName()] = raw
				}
			}
			if len(group) > 0 {
				fields[f.Name] = group
			}
			continue
		}
		raw, err := fieldJSON(f, form, cur)
		if err != nil {
			errs[f.Name] = formMessage(lang, err)
		} else if raw != nil {
			fields[f.Name] = raw
		}
	}
	s, checkErrs := checkSettings(fields, lang)
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

// formMessage says a field's refusal in lang.
func formMessage(lang templates.Lang, err error) string {
	var fe *queue.FieldError
	switch {
	case errors.As(err, &fe):
		return templates.AdminFieldMessage(lang, fe)
	case errors.Is(err, errDateTime):
		return templates.T(lang, "admin.rule.datetime")
	}
	return err.Error()
}

// checkSettings runs the admin API's checks over fields, collecting the
// message in lang of each bad field.
func checkSettings(fields formFields, lang templates.Lang) (queue.Settings, map[string]string) {
	errs := map[string]string{}
	for range 64 { // each round drops a field: there are fewer than 64
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
			errs[key] = templates.AdminFieldMessage(lang, fe)
		}
		if !fields.drop(key) {
			return queue.Settings{}, errs // nothing left to drop: report what we have
		}
	}
	return queue.Settings{}, errs
}

// drop removes a field, or a group's member, and reports whether it was there.
func (ff formFields) drop(key string) bool {
	group, member, ok := strings.Cut(key, ".")
	if !ok {
		_, there := ff[key]
		delete(ff, key)
		return there
	}
	g, _ := ff[group].(map[string]json.RawMessage)
	if _, there := g[member]; !there {
		return false
	}
	delete(g, member)
	return true
}

// formField is the input a settings field belongs to: "tiers[1].interval_ms"
// is the tiers rows, "adaptive.open_at" its own input, "allowed_embedders[0]"
// the embedders.
func formField(field string) string {
	if i := strings.IndexByte(field, '['); i > 0 {
		field = field[:i]
	}
	if f, ok := queue.FindSettingField(field); ok {
		return f.Name
	}
	if group, _, ok := strings.Cut(field, "."); ok {
		if f, ok := queue.FindSettingField(group); ok {
			return f.Name
		}
	}
	return "form"
}

// fieldJSON is one input as the API's JSON: nil leaves it out, so an empty
// input takes its default, as a field left out of the API does. Numbers that
// are not numbers go through as strings, so the API's own check names them.
func fieldJSON(f queue.SettingField, form url.Values, cur *queue.Settings) (json.RawMessage, error) {
	if f.PerLang {
		return localTextJSON(f, form)
	}
	v := form.Get(f.Name)
	switch f.Kind {
	case queue.KindBool:
		return json.Marshal(v == "true" || v == "on")
	case queue.KindSecret:
		// A secret is never shown again: empty keeps the stored one.
		if v == "" && cur != nil && form.Get(f.Name+"_clear") != "true" {
			v = cur.UserSecret
		}
		return json.Marshal(v)
	case queue.KindLongText:
		if v == "" {
			return nil, nil
		}
		return json.Marshal(v)
	case queue.KindTiers:
		return tiersJSON(form[f.Name+".max_position"], form[f.Name+".interval_ms"])
	case queue.KindList:
		// Separated by commas or spaces; the API checks each.
		items := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
		if len(items) == 0 {
			return nil, nil
		}
		return json.Marshal(items)
	}
	if v = strings.TrimSpace(v); v == "" {
		return nil, nil // as its placeholder says: the default
	}
	switch f.Kind {
	case queue.KindNumber, queue.KindDecimal:
		return numberJSON(v, f.Kind == queue.KindDecimal)
	case queue.KindDateTime:
		t, err := parseFormTime(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, errDateTime)
		}
		return json.Marshal(t)
	}
	return json.Marshal(v)
}

// localTextJSON is a text per language as the API's JSON: one string when
// only English is filled in (or every language says the same), else an
// object of the languages filled in. Long text is kept as typed.
func localTextJSON(f queue.SettingField, form url.Values) (json.RawMessage, error) {
	by := map[string]string{}
	for _, l := range templates.Langs {
		v := form.Get(templates.AdminLangInput(f.Name, l))
		if f.Kind != queue.KindLongText {
			v = strings.TrimSpace(v)
		}
		if v != "" {
			by[string(l)] = v
		}
	}
	en, hasEn := by[string(templates.English)]
	same := true
	for _, v := range by {
		same = same && v == en
	}
	switch {
	case len(by) == 0:
		return nil, nil // the default: no text
	case hasEn && same:
		return json.Marshal(en)
	}
	return json.Marshal(by)
}

func numberJSON(v string, decimal bool) (json.RawMessage, error) {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return json.RawMessage(v), nil
	}
	if f, err := strconv.ParseFloat(v, 64); decimal && err == nil {
		return json.Marshal(f)
	}
	return json.Marshal(v)
}

// parseFormTime reads a datetime-local value as UTC, or an RFC 3339 time.
func parseFormTime(v string) (time.Time, error) {
	for _, layout := range []string{formDateTime, formDateTime + ":05"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Parse(time.RFC3339, v)
}

// tiersJSON makes the tier rows one array: an empty max position is the
// open-ended tier, a row left wholly empty is no row.
func tiersJSON(maxes, intervals []string) (json.RawMessage, error) {
	rows := []map[string]json.RawMessage{}
	for i := range max(len(maxes), len(intervals)) {
		m, iv := "", ""
		if i < len(maxes) {
			m = strings.TrimSpace(maxes[i])
		}
		if i < len(intervals) {
			iv = strings.TrimSpace(intervals[i])
		}
		if m == "" && iv == "" {
			continue
		}
		row := map[string]json.RawMessage{"max_position": json.RawMessage("null")}
		var err error
		if m != "" {
			if row["max_position"], err = numberJSON(m, false); err != nil {
				return nil, err
			}
		}
		if row["interval_ms"], err = numberJSON(iv, false); err != nil {
			return nil, err
		}
		if iv == "" {
			row["interval_ms"] = json.RawMessage("0")
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return json.Marshal(rows)
}

// settingsValues are stored settings as the form shows them.
func settingsValues(s queue.Settings) (map[string]string, []templates.AdminTierRow) {
	raw, _ := json.Marshal(s)
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	_ = dec.Decode(&m)
	v := map[string]string{}
	var show func(f queue.SettingField, obj map[string]any)
	show = func(f queue.SettingField, obj map[string]any) {
		val, ok := obj[f.JSONName()]
		if !ok || val == nil {
			return
		}
		switch {
		case f.PerLang:
			if by, ok := val.(map[string]any); ok {
				for _, l := range templates.Langs {
					if s, ok := by[string(l)].(string); ok {
						v[templates.AdminLangInput(f.Name, l)] = s
					}
				}
				return
			}
			v[f.Name] = fmt.Sprint(val)
			return
		}
		switch f.Kind {
		case queue.KindGroup:
			sub, _ := val.(map[string]any)
			for _, member := range f.Fields {
				show(member, sub)
			}
		case queue.KindList:
			var items []string
			for _, it := range val.([]any) {
				items = append(items, fmt.Sprint(it))
			}
			v[f.Name] = strings.Join(items, ", ")
		case queue.KindDateTime:
			if t, err := time.Parse(time.RFC3339Nano, fmt.Sprint(val)); err == nil {
				v[f.Name] = formTime(t)
			}
		case queue.KindSecret, queue.KindTiers:
			// never shown; rows below
		default:
			v[f.Name] = fmt.Sprint(val)
		}
	}
	for _, f := range queue.SettingFields {
		show(f, m)
	}
	var rows []templates.AdminTierRow
	for _, t := range s.Tiers {
		row := templates.AdminTierRow{IntervalMS: strconv.FormatInt(t.IntervalMS, 10)}
		if t.MaxPosition != nil {
			row.MaxPosition = strconv.FormatInt(*t.MaxPosition, 10)
		}
		rows = append(rows, row)
	}
	return v, rows
}

// formTime is t as a datetime-local value in UTC, with seconds only when set.
func formTime(t time.Time) string {
	t = t.UTC()
	if t.Second() != 0 {
		return t.Format(formDateTime + ":05")
	}
	return t.Format(formDateTime)
}

// formValues are the inputs as typed, to show them again with the messages.
func formValues(form url.Values) (map[string]string, []templates.AdminTierRow) {
	v := map[string]string{"room": form.Get("room")}
	var rows []templates.AdminTierRow
	var keep func(f queue.SettingField)
	keep = func(f queue.SettingField) {
		if f.PerLang {
			for _, l := range templates.Langs {
				name := templates.AdminLangInput(f.Name, l)
				v[name] = form.Get(name)
			}
			return
		}
		switch f.Kind {
		case queue.KindGroup:
			for _, m := range f.Fields {
				keep(m)
			}
		case queue.KindSecret:
		case queue.KindTiers:
			maxes, intervals := form[f.Name+".max_position"], form[f.Name+".interval_ms"]
			for i := range max(len(maxes), len(intervals)) {
				var row templates.AdminTierRow
				if i < len(maxes) {
					row.MaxPosition = maxes[i]
				}
				if i < len(intervals) {
					row.IntervalMS = intervals[i]
				}
				rows = append(rows, row)
			}
		case queue.KindBool:
			v[f.Name] = strconv.FormatBool(form.Get(f.Name) == "true" || form.Get(f.Name) == "on")
		default:
			v[f.Name] = form.Get(f.Name)
		}
	}
	for _, f := range queue.SettingFields {
		keep(f)
	}
	return v, rows
}

// defaultValues are the placeholders of empty inputs: what they become.
func defaultValues() map[string]string {
	d := queue.DefaultSettings()
	d.Adaptive = &queue.Adaptive{}
	d.Normalize()
	v, _ := settingsValues(d)
	for _, k := range []string{"title", "message", "paused", "activation", "adaptive.signal", "bot_protection.proof_of_work"} {
		delete(v, k)
	}
	for k, val := range v {
		if val == "0" {
			delete(v, k) // open_at and close_at have no default: no placeholder
		}
	}
	return v
}
