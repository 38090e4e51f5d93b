package templates

import (
	"strings"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// The same tables as web/admin_format.test.ts.
func TestAdminFormat(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rates := []struct {
		v      *float64
		en, ko string
	}{
		{nil, "n/a", "해당 없음"},
		{f(0), "0.0/s", "초당 0.0"},
		{f(2), "2.0/s", "초당 2.0"},
		{f(12.25), "12.3/s", "초당 12.3"},
		{f(1234.5), "1,234.5/s", "초당 1,234.5"},
		{f(1.0 / 30), "1 per 30 s", "30초에 1"},
		{f(0.5), "1 per 2 s", "2초에 1"},
		{f(1.0 / 240), "1 per 4 min", "4분에 1"},
		{f(0.96), "1.0/s", "초당 1.0"},
	}
	for _, c := range rates {
		if got := AdminFormatRate(English, c.v); got != c.en {
			t.Errorf("rate en %v: %q, want %q", c.v, got, c.en)
		}
		if got := AdminFormatRate(Korean, c.v); got != c.ko {
			t.Errorf("rate ko %v: %q, want %q", c.v, got, c.ko)
		}
	}
	secs := []struct {
		v      *float64
		en, ko string
	}{
		{nil, "n/a", "해당 없음"},
		{f(0), "0 s", "0초"},
		{f(59.5), "60 s", "60초"},
		{f(119.4), "119 s", "119초"},
		{f(120), "2 min", "2분"},
		{f(7199), "120 min", "120분"},
		{f(7200), "2 h", "2시간"},
		{f(36_000_000), "10,000 h", "10,000시간"},
	}
	for _, c := range secs {
		if got := AdminFormatSeconds(English, c.v); got != c.en {
			t.Errorf("seconds en %v: %q, want %q", *c.v, got, c.en)
		}
		if got := AdminFormatSeconds(Korean, c.v); got != c.ko {
			t.Errorf("seconds ko %v: %q, want %q", *c.v, got, c.ko)
		}
	}
}

// Every admin.* key the pages or the script use is in the catalogue.
func TestAdminStringsCoverTheFields(t *testing.T) {
	for _, lang := range Langs {
		s := AdminStrings(lang)
		for _, k := range []string{"admin.conn.connecting", "admin.conn.ws", "admin.conn.sse", "admin.conn.poll", "admin.conn.reconnecting", "admin.activation.always", "admin.activation.off", "admin.activation.adaptive", "admin.degrade.on", "admin.degrade.auto"} {
			if s[k] == "" {
				t.Errorf("%s lacks %s", lang, k)
			}
		}
		for k := range s {
			if !strings.HasPrefix(k, "admin.") {
				t.Errorf("AdminStrings has %s", k)
			}
		}
	}
}

// TestEveryDeclaredSettingHasItsWords: every label, help, choice and
// section key the room form takes from queue.SettingFields is in both
// languages, so a new setting cannot ship without them.
func TestEveryDeclaredSettingHasItsWords(t *testing.T) {
	var keys []string
	var add func(f queue.SettingField)
	add = func(f queue.SettingField) {
		keys = append(keys, f.LabelKey())
		if f.HelpKey() != "" {
			keys = append(keys, f.HelpKey())
		}
		for _, c := range f.Choices {
			keys = append(keys, f.ChoiceKey(c))
		}
		for _, m := range f.Fields {
			add(m)
		}
	}
	for _, f := range queue.SettingFields {
		add(f)
	}
	for _, s := range queue.SettingSections {
		keys = append(keys, "admin.section."+s)
	}
	for _, lang := range Langs {
		for _, k := range keys {
			if _, ok := catalogue[lang][k]; !ok {
				t.Errorf("%s lacks %s", lang, k)
			}
		}
	}
}

// The state word says what admission does: in degraded mode this server
// admits nobody, and at capacity nobody gets in until a slot frees, so
// neither says "Admitting" (as in web/admin_format.test.ts).
func TestAdminStateIsTrueToAdmission(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		paused, closed   bool
		soldOut, sched   bool
		degraded         *bool
		active, capacity int64
		key              string
	}{
		{false, false, false, false, &no, 3, 10, "admin.state.running"},
		{false, false, false, false, nil, 3, 10, "admin.state.running"},
		{false, false, false, false, &no, 10, 10, "admin.state.full"},
		{false, false, false, false, &no, 12, 10, "admin.state.full"}, // capacity lowered below the shoppers inside
		{false, false, false, false, &yes, 3, 10, "admin.state.held"},
		{true, false, false, false, &yes, 10, 10, "admin.state.paused"},
		{false, true, false, false, &no, 0, 10, "admin.state.closed"},
		{true, false, true, false, &no, 3, 10, "admin.state.sold_out"}, // sold out says so, paused or not
		{false, false, false, true, &no, 0, 10, "admin.state.scheduled"},
	} {
		if got := adminState(English, c.paused, c.closed, c.soldOut, c.sched, AdminHealth{Degraded: c.degraded}, c.active, c.capacity); got != T(English, c.key) {
			t.Errorf("%+v: %q, want %q", c, got, T(English, c.key))
		}
	}
}
