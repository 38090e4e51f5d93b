package templates

import (
	"errors"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/queue"
)

// TestEveryRuleHasWords: each rule a refused setting can name has the
// dashboard's words in every language.
func TestEveryRuleHasWords(t *testing.T) {
	for _, r := range queue.Rules {
		for _, l := range Langs {
			if _, ok := catalogue[l]["admin.rule."+string(r)]; !ok {
				t.Errorf("%s: no admin.rule.%s", l, r)
			}
		}
	}
}

// TestFieldMessagesInEachLanguage: a refused setting is said in the page's
// language with its figures grouped as the language does, and where in
// the setting it is (a tier, an item, a language).
func TestFieldMessagesInEachLanguage(t *testing.T) {
	for _, c := range []struct {
		body string
		lang Lang
		want string
	}{
		{`{"capacity": 0}`, English, "Must be between 1 and 1,000,000."},
		{`{"capacity": 0}`, Korean, "1에서 1,000,000 사이여야 합니다."},
		{`{"tiers": [{"max_position": 5, "interval_ms": 500}, {"max_position": 3, "interval_ms": 500}, {"max_position": null, "interval_ms": 500}]}`,
			Korean, "2번째 단계: 앞 단계보다 커야 합니다."},
		{`{"title": {"en": "Sale", "ko": "` + strings.Repeat("가", 201) + `"}}`, Korean, "한국어: 200자 이하여야 합니다."},
		{`{"title": {"en": "Sale", "ko": "` + strings.Repeat("가", 201) + `"}}`, English, "Korean: Must be at most 200 characters."},
		{`{"allowed_embedders": ["https://a.example", "https://B.example"]}`, English, "Item 2: Write it as browsers do: https://b.example"},
		{`{"capacity": "ten"}`, Korean, "숫자여야 합니다."},
	} {
		_, err := queue.ParseSettings([]byte(c.body))
		var fe *queue.FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: %v", c.body, err)
		}
		if got := AdminFieldMessage(c.lang, fe); got != c.want {
			t.Errorf("%s in %s: %q, want %q", c.body, c.lang, got, c.want)
		}
	}
	// A rule without words shows the API's message rather than a key.
	fe := &queue.FieldError{Field: "capacity", Message: "is odd", Rule: "odd"}
	if got := AdminFieldMessage(Korean, fe); got != "capacity: is odd" {
		t.Errorf("unknown rule: %q", got)
	}
}
