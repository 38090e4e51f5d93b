package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSettingsDefaultsAndFields(t *testing.T) {
	s, err := ParseSettings([]byte(`{"capacity": 5, "tiers": [{"max_position": 10, "interval_ms": 1000}, {"max_position": null, "interval_ms": 4000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Capacity != 5 || s.BatchSize != 10 || s.BatchIntervalMS != 200 || s.JitterMS != 1000 || s.Activation != ActivationAlways {
		t.Fatalf("defaults not applied: %+v", s)
	}
	if s.TierInterval(10) != time.Second || s.TierInterval(11) != 4*time.Second {
		t.Fatalf("tiers: %v %v", s.TierInterval(10), s.TierInterval(11))
	}
	d := DefaultSettings()
	for pos, want := range map[int64]time.Duration{1: 2 * time.Second, 100: 2 * time.Second, 101: 5 * time.Second, 500: 5 * time.Second, 501: 10 * time.Second} {
		if got := d.TierInterval(pos); got != want {
			t.Errorf("default tier at %d: %v, want %v", pos, got, want)
		}
	}
	if d.ConfiguredRate() != 50 {
		t.Fatalf("10 per 200 ms is 50/s, got %v", d.ConfiguredRate())
	}
}

func TestParseSettingsNamesTheBadField(t *testing.T) {
	for body, field := range map[string]string{
		`{"capacity": -1}`:        "capacity",
		`{"batch_size": 0}`:       "batch_size",
		`{"jitter_ms": -5}`:       "jitter_ms",
		`{"session_ttl_s": 0}`:    "session_ttl_s",
		`{"abandon_after_s": 0}`:  "abandon_after_s",
		`{"abandon_after_s": 19}`: "abandon_after_s",
		`{"tiers": [{"max_position": null, "interval_ms": 30000}]}`: "abandon_after_s",
		`{"target_url": "//evil"}`:                                  "target_url",
		`{"user_secret": "short"}`:                                  "user_secret",
		`{"paused": "yes"}`:                                         "paused",
		`{"theme_color": "red"}`:                                    "theme_color",
		`{"logo_url": "javascript:alert(1)"}`:                       "logo_url",
		`{"ends_at": "tomorrow"}`:                                   "ends_at",
		`{"opens_at": "2026-12-01 10:00"}`:                          "opens_at",
		`{"tiers": [{"max_position": null, "interval_ms": 1000}, {"max_position": null, "interval_ms": 1000}]}`:                                         "tiers[0].max_position",
		`{"tiers": [{"max_position": 10, "interval_ms": 1000}, {"max_position": 5, "interval_ms": 1000}, {"max_position": null, "interval_ms": 1000}]}`: "tiers[1].max_position",
		`{"tiers": [{"max_position": null, "interval_ms": 10}]}`:                                                                                        "tiers[0].interval_ms",
		``:                               "body",
		`{} {}`:                          "body",
		`{"queueing_method": "lottery"}`: "queueing_method",
		`{"max_waiting": -1}`:            "max_waiting",
		`{"sold_out": 1}`:                "sold_out",
		`{"sold_out_message": "` + strings.Repeat("x", 2001) + `"}`:               "sold_out_message",
		`{"opens_at": "2026-01-02T00:00:00Z", "ends_at": "2026-01-01T00:00:00Z"}`: "opens_at",
	} {
		_, err := ParseSettings([]byte(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a FieldError on %s", body, err, field)
			continue
		}
		if !slices.Contains(Rules, fe.Rule) {
			t.Errorf("%s: %v names rule %q, not one of Rules", body, err, fe.Rule)
		}
	}
}

// FuzzParseSettings: any input is either refused with a FieldError or gives
// settings that validate and survive a JSON round trip.
func FuzzParseSettings(f *testing.F) {
	for _, seed := range []string{`{}`, `{"capacity": 5}`, `{"tiers": [{"max_position": 3, "interval_ms": 100}, {"max_position": null, "interval_ms": 200}]}`,
		`{"ends_at": "2026-01-01T00:00:00Z", "activation": "off"}`, `[`, `null`, `{"capacity": 1e99}`,
		`{"queueing_method": "random", "max_waiting": 100, "sold_out": true, "sold_out_message": "gone"}`,
		`{"queueing_method": "lottery"}`, `{"max_waiting": -1}`, `{"queueing_method": ""}`, `{"opens_at": "2026-01-01T00:00:00Z", "ends_at": "2026-01-01T00:00:00Z"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSettings(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || !slices.Contains(Rules, fe.Rule) {
				t.Fatalf("error without a field or a rule: %v (rule %q)", err, fe.Rule)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed settings do not validate: %v", err)
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseSettings(out); err != nil {
			t.Fatalf("round trip refused: %v\n%s", err, out)
		}
	})
}

func TestValidRoomID(t *testing.T) {
	for id, want := range map[string]bool{
		"demo": true, "a": true, "drop-2026-11": true, "x" + string(make([]byte, 0)): true,
		"": false, "Demo": false, "a_b": false, "a/b": false, "한국": false,
		"0123456789012345678901234567890123456789012345678901234567890123":  true,
		"01234567890123456789012345678901234567890123456789012345678901234": false,
	} {
		if got := ValidRoomID(id); got != want {
			t.Errorf("ValidRoomID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestEverySettingIsDeclared: every JSON field of Settings and of its
// nested groups has a SettingField, and every SettingField is a JSON field,
// so a setting cannot be added to the struct alone (or the table alone).
func TestEverySettingIsDeclared(t *testing.T) {
	want := map[string]bool{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Fatalf("%s%s has no JSON name", prefix, typ.Field(i).Name)
			}
			want[prefix+name] = true
			ft := typ.Field(i).Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft == reflect.TypeFor[Adaptive]() || ft == reflect.TypeFor[BotProtection]() {
				walk(prefix+name+".", ft)
			}
		}
	}
	walk("", reflect.TypeFor[Settings]())
	got := map[string]bool{}
	for _, f := range SettingFields {
		got[f.Name] = true
		if f.Kind == KindGroup && len(f.Fields) == 0 || f.Kind != KindGroup && len(f.Fields) > 0 {
			t.Errorf("%s: only a group has members", f.Name)
		}
		if !slices.Contains(SettingSections, f.Section) {
			t.Errorf("%s: section %q", f.Name, f.Section)
		}
		for _, m := range f.Fields {
			got[m.Name] = true
			if !strings.HasPrefix(m.Name, f.Name+".") {
				t.Errorf("member %s of %s", m.Name, f.Name)
			}
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("Settings.%s is not declared in SettingFields", name)
		}
	}
	for name := range got {
		if !want[name] {
			t.Errorf("SettingFields declares %s, which Settings lacks", name)
		}
	}
}

// TestValidateChangesNothing: Validate reports; only Normalize fills.
func TestValidateChangesNothing(t *testing.T) {
	s := DefaultSettings()
	s.Tiers = nil
	s.BotProtection = BotProtection{}
	s.Activation = ActivationAdaptive
	s.Adaptive = &Adaptive{Signal: SignalGateInflight, OpenAt: 0.8, CloseAt: 0.5}
	before, _ := json.Marshal(s)
	if err := s.Validate(); err == nil {
		t.Error("no tiers validated before Normalize")
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Errorf("Validate changed the settings:\n%s\n%s", before, after)
	}
	s.Normalize()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(s.Tiers) != 3 || s.Adaptive.WindowS != 60 || s.Adaptive.WindowsToClose != 3 || s.BotProtection.PowCost != DefaultPowCost || !s.BotProtection.PowOn() {
		t.Errorf("normalized %+v %+v", s, *s.Adaptive)
	}
}

// TestFieldErrorsNameDeclaredFields: each check's error names its own field
// (or an element of it), the path the dashboard maps back to its input.
func TestFieldErrorsNameDeclaredFields(t *testing.T) {
	for body, field := range map[string]string{
		`{"title": "` + strings.Repeat("x", 201) + `"}`:                "title",
		`{"title": {"fr": "Vente"}}`:                                   "title.fr",
		`{"message": {"en": "hi", "ko": " "}}`:                         "message.ko",
		`{"product_name": {"ko": "` + strings.Repeat("가", 201) + `"}}`: "product_name.ko",
		`{"title": 5}`:                "title",
		`{"activation": "sometimes"}`: "activation",
		`{"product_id": "` + strings.Repeat("x", 65) + `"}`:                                                                 "product_id",
		`{"max_quantity": -1}`:                                                                                              "max_quantity",
		`{"allowed_embedders": ["https://a.example/x"]}`:                                                                    "allowed_embedders[0]",
		`{"bot_protection": {"proof_of_work": "maybe"}}`:                                                                    "bot_protection.proof_of_work",
		`{"bot_protection": {"places_per_ip": -1}}`:                                                                         "bot_protection.places_per_ip",
		`{"activation": "adaptive"}`:                                                                                        "adaptive",
		`{"activation": "adaptive", "adaptive": {"signal": "x", "open_at": 1}}`:                                             "adaptive.signal",
		`{"activation": "adaptive", "adaptive": {"signal": "gate_inflight", "open_at": 1, "close_at": 2}}`:                  "adaptive.close_at",
		`{"activation": "adaptive", "adaptive": {"signal": "gate_inflight", "open_at": 1, "window_s": 9999}}`:               "adaptive.window_s",
		`{"activation": "adaptive", "adaptive": {"signal": "prometheus", "prometheus_url": "http://p:9090", "open_at": 1}}`: "adaptive.query",
	} {
		_, err := ParseSettings([]byte(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a FieldError on %s", body, err, field)
			continue
		}
		name, _, _ := strings.Cut(fe.Field, "[")
		if _, ok := FindSettingField(name); !ok {
			t.Errorf("%s names %s, which is not declared", body, fe.Field)
		}
		if !slices.Contains(Rules, fe.Rule) {
			t.Errorf("%s: %v names rule %q, not one of Rules", body, err, fe.Rule)
		}
	}
}

// TestFieldErrorsCarryTheirFigures: a page that says a rule in its own
// words gets the figures the English message names.
func TestFieldErrorsCarryTheirFigures(t *testing.T) {
	for body, want := range map[string]string{
		`{"capacity": 0}`: `between map[max:1000000 min:1]`,
		`{"tiers": [{"max_position": null, "interval_ms": 30000}]}`: `abandon_after map[longest:30000 min:20]`,
		`{"allowed_embedders": ["https://A.example"]}`:              `origin_as_sent map[origin:https://a.example]`,
		`{"title": {"ko": "` + strings.Repeat("가", 201) + `"}}`:     `max_chars map[n:200]`,
		`{"capacity": "ten"}`:            `number map[]`,
		`{"queueing_method": "lottery"}`: `one_of map[choices:fifo, random, passthrough, reject]`,
		`{"target_url": "ftp://x"}`:      `url_scheme map[]`,
		`{"activation": "adaptive", "adaptive": {"signal": "gate_latency", "open_at": 1}}`: `positive_by_signal map[signal:gate_latency]`,
	} {
		_, err := ParseSettings([]byte(body))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: %v", body, err)
		}
		if got := fmt.Sprintf("%s %v", fe.Rule, fe.Params); got != want {
			t.Errorf("%s: %s, want %s", body, got, want)
		}
	}
}

// docsTable is docs/api.md's list of settings, made from the declaration.
func docsTable() string {
	def := DefaultSettings()
	def.Adaptive = &Adaptive{}
	def.Normalize()
	raw, _ := json.Marshal(def)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	lookup := func(name string) any {
		var v any = m
		for part := range strings.SplitSeq(name, ".") {
			obj, _ := v.(map[string]any)
			v = obj[part]
		}
		return v
	}
	var b strings.Builder
	b.WriteString("| field | default | meaning |\n|---|---|---|\n")
	row := func(f SettingField) {
		d := "none" // left out: no value at all (ends_at, a signal)
		switch v := lookup(f.Name); {
		case f.Kind == KindGroup:
			d = "see below"
		case v != nil && v != "":
			d, _ = jsonText(v)
		case f.Kind == KindNumber:
			d = "`0`"
		case f.Kind == KindList:
			d = "`[]`"
		case f.Kind != KindDateTime && f.Kind != KindSelect && f.Kind != KindDecimal:
			d = "`\"\"`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, d, f.Doc)
	}
	for _, f := range SettingFields {
		row(f)
		for _, sub := range f.Fields {
			row(sub)
		}
	}
	return b.String()
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return "`" + string(b) + "`", err
}

// TestDocsListEverySetting: docs/api.md's settings table is the one the
// declaration makes. WAITROOM_UPDATE_DOCS=1 rewrites it.
func TestDocsListEverySetting(t *testing.T) {
	const path, begin, end = "../docs/api.md", "<!-- settings:begin (made from queue.SettingFields: WAITROOM_UPDATE_DOCS=1 go test ./queue/ -run TestDocsListEverySetting) -->\n", "<!-- settings:end -->"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the settings markers", path)
	}
	want := docsTable()
	if doc[i+len(begin):j] == want {
		return
	}
	if os.Getenv("WAITROOM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's settings table differs from queue.SettingFields; run WAITROOM_UPDATE_DOCS=1 go test ./queue/ -run TestDocsListEverySetting", path)
}
