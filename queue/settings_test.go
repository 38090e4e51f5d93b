package queue

import (
	"encoding/json"
	"errors"
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
		`{"ends_at": "tomorrow"}`:                                   "body",
		`{"tiers": [{"max_position": null, "interval_ms": 1000}, {"max_position": null, "interval_ms": 1000}]}`:                                         "tiers[0].max_position",
		`{"tiers": [{"max_position": 10, "interval_ms": 1000}, {"max_position": 5, "interval_ms": 1000}, {"max_position": null, "interval_ms": 1000}]}`: "tiers[1].max_position",
		`{"tiers": [{"max_position": null, "interval_ms": 10}]}`:                                                                                        "tiers[0].interval_ms",
		``:      "body",
		`{} {}`: "body",
	} {
		_, err := ParseSettings([]byte(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a FieldError on %s", body, err, field)
		}
	}
}

// FuzzParseSettings: any input is either refused with a FieldError or gives
// settings that validate and survive a JSON round trip.
func FuzzParseSettings(f *testing.F) {
	for _, seed := range []string{`{}`, `{"capacity": 5}`, `{"tiers": [{"max_position": 3, "interval_ms": 100}, {"max_position": null, "interval_ms": 200}]}`,
		`{"ends_at": "2026-01-01T00:00:00Z", "activation": "off"}`, `[`, `null`, `{"capacity": 1e99}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSettings(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("error without a field: %v", err)
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
