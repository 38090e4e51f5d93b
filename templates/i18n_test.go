package templates

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestNegotiate(t *testing.T) {
	cases := []struct {
		accept, override string
		want             Lang
	}{
		{"", "", English},
		{"ko", "", Korean},
		{"ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", "", Korean},
		{"en-US,en;q=0.9,ko;q=0.8", "", English},
		{"en;q=0.5, ko;q=0.8", "", Korean}, // q-values, not order, decide
		{"ko;q=0.8, en;q=0.8", "", Korean}, // a tie goes to the earlier
		{"fr-FR, fr;q=0.9, ko;q=0.3", "", Korean},
		{"fr, de", "", English}, // nothing we have: the default
		{"ko;q=0", "", English}, // q=0 means "not this"
		{"*", "", English},
		{"ko;q=0.5, *;q=0.9", "", English},
		{"ko;q=abc, en;q=0.1", "", English}, // a bad weight counts as 0
		{"KO-kr", "", Korean},
		{"ko", "en", English}, // ?lang= wins
		{"en", "ko", Korean},
		{"en", "ko-KR", Korean},
		{"ko", "xx", Korean}, // an unknown override is ignored
		{"", " KO ", Korean},
	}
	for _, c := range cases {
		if got := Negotiate(c.accept, c.override); got != c.want {
			t.Errorf("Negotiate(%q, %q) = %q, want %q", c.accept, c.override, got, c.want)
		}
	}
}

// The same table as etaCases in web/format.test.ts.
func TestETAWords(t *testing.T) {
	cases := []struct {
		s      int64
		en, ko string
	}{
		{-1, "Working it out…", "계산 중…"},
		{0, "less than a minute", "1분 미만"},
		{59, "less than a minute", "1분 미만"},
		{60, "about 1 minute", "약 1분"},
		{89, "about 1 minute", "약 1분"},
		{90, "about 2 minutes", "약 2분"},
		{180, "about 3 minutes", "약 3분"},
		{3569, "about 59 minutes", "약 59분"},
		{3570, "about 1 hour", "약 1시간"},
		{5399, "about 1 hour", "약 1시간"},
		{5400, "about 2 hours", "약 2시간"},
		{36_000_000, "about 10,000 hours", "약 10,000시간"},
	}
	for _, c := range cases {
		if got := ETAWords(English, c.s); got != c.en {
			t.Errorf("ETAWords(en, %d) = %q, want %q", c.s, got, c.en)
		}
		if got := ETAWords(Korean, c.s); got != c.ko {
			t.Errorf("ETAWords(ko, %d) = %q, want %q", c.s, got, c.ko)
		}
	}
}

// The same table as etaRangeCases in web/format.test.ts.
func TestETARangeWords(t *testing.T) {
	cases := []struct {
		low, point, high int64
		en, ko           string
	}{
		{-1, -1, -1, "Working it out…", "계산 중…"},
		{-1, 200, -1, "about 3 minutes", "약 3분"}, // no range: the point
		{0, 20, 59, "less than a minute", "1분 미만"},
		{30, 50, 70, "about 1 minute", "약 1분"}, // not "less than a minute": it may take longer
		{41, 68, 140, "about 1–2 minutes", "약 1–2분"},
		{150, 240, 300, "about 3–5 minutes", "약 3–5분"},
		{170, 180, 200, "about 3 minutes", "약 3분"},
		{300, 200, 100, "about 3 minutes", "약 3분"}, // ends that cross the point are ignored
		{2400, 3000, 5400, "about 1–2 hours", "약 1–2시간"},
		{3000, 3600, 5000, "about 1 hour", "약 1시간"},
		{36_000_000, 36_000_000, 72_000_000, "about 10,000–20,000 hours", "약 10,000–20,000시간"},
	}
	for _, c := range cases {
		if got := ETARangeWords(English, c.low, c.point, c.high); got != c.en {
			t.Errorf("ETARangeWords(en, %d, %d, %d) = %q, want %q", c.low, c.point, c.high, got, c.en)
		}
		if got := ETARangeWords(Korean, c.low, c.point, c.high); got != c.ko {
			t.Errorf("ETARangeWords(ko, %d, %d, %d) = %q, want %q", c.low, c.point, c.high, got, c.ko)
		}
	}
}

func TestTnAndNumbers(t *testing.T) {
	cases := []struct {
		lang Lang
		n    int64
		want string
	}{
		{English, 0, "No one is ahead of you"},
		{English, 1, "1 person ahead of you"},
		{English, 2, "2 people ahead of you"},
		{English, 1234567, "1,234,567 people ahead of you"},
		{Korean, 0, "내 앞에 아무도 없습니다"},
		{Korean, 1, "내 앞에 1명"}, // Korean has no singular: .other
		{Korean, 12345, "내 앞에 12,345명"},
	}
	for _, c := range cases {
		if got := Tn(c.lang, "waiting.ahead", c.n); got != c.want {
			t.Errorf("Tn(%s, %d) = %q, want %q", c.lang, c.n, got, c.want)
		}
	}
	if got := FormatNumber("xx", 1000); got != "1,000" {
		t.Errorf("unknown language: %q", got)
	}
	if got := T(Korean, "no.such.key"); got != "no.such.key" {
		t.Errorf("missing key = %q", got)
	}
}

func TestFormatClock(t *testing.T) {
	morning := time.Date(2030, 1, 2, 9, 5, 7, 0, time.FixedZone("KST", 9*3600)) // 00:05:07 UTC
	if got := FormatClock(English, morning); got != "12:05:07 AM UTC" {
		t.Errorf("en: %q", got)
	}
	if got := FormatClock(Korean, morning.Add(13*time.Hour)); got != "오후 1:05:07 UTC" {
		t.Errorf("ko: %q", got)
	}
}

// Every language says everything English says, with the same placeholders;
// only the plural forms .zero and .one may be left to .other.
func TestCatalogueComplete(t *testing.T) {
	placeholders := regexp.MustCompile(`\{[a-z]+\}`)
	for _, lang := range Langs {
		for key, en := range catalogue[English] {
			s, ok := catalogue[lang][key]
			if !ok {
				if !isPluralForm(key) {
					t.Errorf("%s lacks %q", lang, key)
				}
				continue
			}
			if strings.TrimSpace(s) == "" {
				t.Errorf("%s %q is empty", lang, key)
			}
			if got, want := placeholders.FindAllString(s, -1), placeholders.FindAllString(en, -1); strings.Join(got, "") != strings.Join(want, "") {
				t.Errorf("%s %q has placeholders %v, English has %v", lang, key, got, want)
			}
		}
		for key := range catalogue[lang] {
			if _, ok := catalogue[English][key]; !ok {
				t.Errorf("%s has %q, which English lacks", lang, key)
			}
		}
	}
}

// The client's KEYS list in web/strings.ts and clientKeys here must agree,
// so the page carries every string the script asks for.
func TestClientStringsMatchTheScript(t *testing.T) {
	src, err := os.ReadFile("../web/strings.ts")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)export const KEYS = \[(.*?)\] as const`).FindSubmatch(src)
	if block == nil {
		t.Fatal("KEYS not found in web/strings.ts")
	}
	var tsKeys []string
	for _, m := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(block[1], -1) {
		tsKeys = append(tsKeys, string(m[1]))
	}
	goKeys := append([]string(nil), clientKeys...)
	sort.Strings(tsKeys)
	sort.Strings(goKeys)
	if strings.Join(tsKeys, ",") != strings.Join(goKeys, ",") {
		t.Fatalf("web/strings.ts KEYS %v\ntemplates clientKeys %v", tsKeys, goKeys)
	}
	for _, lang := range Langs {
		strs := ClientStrings(lang)
		for _, k := range clientKeys {
			if _, ok := strs[k]; !ok && !isPluralForm(k) {
				t.Errorf("ClientStrings(%s) lacks %q", lang, k)
			}
		}
		if _, ok := strs["waiting.heading"]; ok {
			t.Errorf("ClientStrings(%s) carries page-only strings", lang)
		}
	}
	if _, ok := ClientStrings(Korean)["eta.minutes.one"]; ok {
		t.Error("Korean got an English singular form")
	}
}

// The same table as countdownClock's test in web/format.test.ts.
func TestCountdownClock(t *testing.T) {
	for s, want := range map[int64]string{0: "0:00", -3: "0:00", 9: "0:09", 61: "1:01", 3599: "59:59", 3600: "1:00:00", 90061: "25:01:01"} {
		if got := CountdownClock(s); got != want {
			t.Errorf("CountdownClock(%d) = %q, want %q", s, got, want)
		}
	}
}
