package queue

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestLocalTextRoundTripsBothShapes(t *testing.T) {
	for _, in := range []string{
		`{"title":"Spring drop","message":"","product_name":"Sneaker"}`,
		`{"title":{"en":"Spring drop","ko":"봄 드롭"},"message":{"ko":"기다려 주세요"},"product_name":{"en":"Sneaker"}}`,
	} {
		s, err := ParseSettings([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want, got map[string]any
		_ = json.Unmarshal([]byte(in), &want)
		_ = json.Unmarshal(out, &got)
		for _, k := range []string{"title", "message", "product_name"} {
			w, _ := json.Marshal(want[k])
			g, _ := json.Marshal(got[k])
			if string(w) != string(g) {
				t.Errorf("%s: %s came back as %s, want %s", in, k, g, w)
			}
		}
		back, err := ParseSettings(out)
		if err != nil || !back.Title.Equal(s.Title) || !back.Message.Equal(s.Message) || !back.ProductName.Equal(s.ProductName) {
			t.Errorf("%s: a second round changed the texts: %v %+v", in, err, back)
		}
	}
	// No product name stays out of the JSON, as before.
	out, _ := json.Marshal(DefaultSettings())
	if strings.Contains(string(out), "product_name") || !strings.Contains(string(out), `"title":""`) {
		t.Errorf("defaults: %s", out)
	}
}

func TestLocalTextPicksTheLanguageThenEnglishThenAny(t *testing.T) {
	both := TextByLang(map[string]string{"en": "Sale", "ko": "세일"})
	onlyKo := TextByLang(map[string]string{"ko": "세일"})
	for _, c := range []struct {
		text       LocalText
		lang, want string
	}{
		{both, "ko", "세일"},
		{both, "en", "Sale"},
		{both, "fr", "Sale"}, // not a language of the pages: English
		{TextByLang(map[string]string{"en": "Sale"}), "ko", "Sale"},
		{onlyKo, "en", "세일"}, // no English: any
		{Text("Sale"), "ko", "Sale"},
		{Text(""), "ko", ""},
		{LocalText{}, "en", ""},
	} {
		if got := c.text.In(c.lang); got != c.want {
			t.Errorf("%v in %s: %q, want %q", c.text.byLang, c.lang, got, c.want)
		}
	}
	if !Text("").IsZero() || both.IsZero() || Text("x").PerLang() || !onlyKo.PerLang() {
		t.Error("IsZero/PerLang")
	}
	// ByLang is a copy: changing it changes nothing stored.
	m := both.ByLang()
	m["en"] = "changed"
	if both.In("en") != "Sale" {
		t.Error("ByLang shares its map")
	}
}

func TestLocalTextRefusals(t *testing.T) {
	for body, want := range map[string]string{
		`{"title": {}}`:             "title",
		`{"title": {"": "x"}}`:      "title.",
		`{"title": {"EN": "x"}}`:    "title.EN",
		`{"title": {"ko-KR": "x"}}`: "title.ko-KR",
		`{"title": {"en": ""}}`:     "title.en",
		`{"title": {"en": 1}}`:      "title",
		`{"title": ["en"]}`:         "title",
		`{"title": true}`:           "title",
		`{"message": "` + strings.Repeat("가", 2001) + `"}`: "message",
	} {
		_, err := ParseSettings([]byte(body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != want || fe.Message == "" {
			t.Errorf("%s: %v, want a FieldError on %q", body, err, want)
		}
	}
	// A limit counts characters, not bytes: 200 Korean syllables are a title.
	if _, err := ParseSettings([]byte(`{"title": {"ko": "` + strings.Repeat("가", 200) + `"}}`)); err != nil {
		t.Errorf("200 characters: %v", err)
	}
	// null is no text, as for any field.
	if s, err := ParseSettings([]byte(`{"title": null}`)); err != nil || !s.Title.IsZero() {
		t.Errorf("null: %v %v", err, s.Title)
	}
}

// FuzzLocalText: any JSON value either is refused with a FieldError or
// makes a text that survives a round trip unchanged and picks a text in
// every language from its own.
func FuzzLocalText(f *testing.F) {
	for _, seed := range []string{`"Sale"`, `""`, `{"en":"Sale","ko":"세일"}`, `{"ko":"세일"}`, `{}`, `{"fr":"x"}`,
		`{"en":""}`, `null`, `5`, `[]`, `{"en":1}`, `"\u0000"`, `{"en":"a","en":"b"}`, `{"ko":"` + strings.Repeat("가", 201) + `"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := ParseSettings([]byte(`{"title": ` + raw + `}`))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: %v is not a FieldError", raw, err)
			}
			return
		}
		out, err := json.Marshal(s.Title)
		if err != nil {
			t.Fatal(err)
		}
		var back LocalText
		if err := json.Unmarshal(out, &back); err != nil || !back.Equal(s.Title) {
			t.Fatalf("%q: round trip %s: %v", raw, out, err)
		}
		for _, lang := range []string{"en", "ko", "fr", ""} {
			got := s.Title.In(lang)
			if s.Title.PerLang() && got == "" {
				t.Fatalf("%q: no text in %q", raw, lang)
			}
		}
	})
}
