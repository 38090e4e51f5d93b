package dashboard

import (
	"net/url"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// FuzzFormSettings: any room form either gives settings that pass the API's
// checks, or messages keyed by an input the form has (or "form").
func FuzzFormSettings(f *testing.F) {
	for _, seed := range []string{
		"", "capacity=5", "capacity=0&batch_size=ten", "tiers.max_position=10&tiers.max_position=&tiers.interval_ms=500&tiers.interval_ms=2000",
		"tiers.max_position=&tiers.interval_ms=", "tiers.max_position=1&tiers.max_position=1", "ends_at=2031-02-03T04:05", "ends_at=2031-02-03T04:05:06",
		"ends_at=2031-02-03T04:05:06%2B09:00", "ends_at=yesterday", "activation=adaptive&adaptive.signal=gate_inflight&adaptive.open_at=0.8&adaptive.close_at=0.5",
		"activation=adaptive&adaptive.open_at=NaN", "adaptive.open_at=1e400", "bot_protection.proof_of_work=maybe&bot_protection.pow_cost=-1",
		"allowed_embedders=https://a.example,%20http://b", "paused=on&user_secret=short", "theme_color=%23abc&logo_url=/x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		s, errs := formSettings(form, nil, templates.Korean)
		if len(errs) > 0 {
			for k, msg := range errs {
				if _, ok := queue.FindSettingField(k); !ok && k != "form" {
					t.Fatalf("message for %q, which is no input: %v", k, errs)
				}
				// Said in Korean, not the API's English ("capacity: must…").
				if k != "form" && strings.Contains(msg, "must ") || strings.Contains(msg, "admin.rule.") {
					t.Fatalf("message for %q is not in Korean: %q", k, msg)
				}
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted settings do not validate: %v", err)
		}
		values, rows := settingsValues(s)
		if len(values) == 0 || len(rows) != len(s.Tiers) {
			t.Fatalf("settings not shown: %v %v", values, rows)
		}
	})
}
