package queue

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/waitroom/waitroom/internal/vocab"
)

// LocalText is a text visitors read (a room's title, message, product name):
// one text for every language, or one per language. In JSON it is either a
// string or an object by language tag ({"en": "…", "ko": "…"}), and it
// marshals back to the shape it came in, so the API round-trips both.
type LocalText struct {
	text   string            // for every language, when byLang is nil
	byLang map[string]string // by vocab.Languages tag
}

// Text is one text for every language.
func Text(s string) LocalText { return LocalText{text: s} }

// TextByLang is a text per language (tags of vocab.Languages); the map is copied.
func TextByLang(m map[string]string) LocalText {
	return LocalText{byLang: maps.Clone(m)}
}

// IsZero reports whether there is no text at all (`omitzero` reads it).
func (t LocalText) IsZero() bool { return t.byLang == nil && t.text == "" }

// PerLang reports whether the text is given per language.
func (t LocalText) PerLang() bool { return t.byLang != nil }

// ByLang returns the texts by language (a copy), or nil for one text.
func (t LocalText) ByLang() map[string]string { return maps.Clone(t.byLang) }

// In is the text for lang: lang's own, else English's, else any language's
// (in vocab.Languages order), else "".
func (t LocalText) In(lang string) string {
	if t.byLang == nil {
		return t.text
	}
	if s, ok := t.byLang[lang]; ok {
		return s
	}
	for _, l := range vocab.Languages {
		if s, ok := t.byLang[l]; ok {
			return s
		}
	}
	for _, l := range slices.Sorted(maps.Keys(t.byLang)) {
		return t.byLang[l]
	}
	return ""
}

// String is the English text (or the one text), for logs and tests.
func (t LocalText) String() string { return t.In(vocab.LangEnglish) }

// Equal reports whether t and o are the same texts in the same shape.
func (t LocalText) Equal(o LocalText) bool {
	return t.text == o.text && (t.byLang == nil) == (o.byLang == nil) && maps.Equal(t.byLang, o.byLang)
}

// MarshalJSON writes the shape the text came in: a string or an object.
func (t LocalText) MarshalJSON() ([]byte, error) {
	if t.byLang != nil {
		return json.Marshal(t.byLang)
	}
	return json.Marshal(t.text)
}

var localTextType = reflect.TypeFor[LocalText]()

// UnmarshalJSON reads a string or an object of strings; which languages
// and how long is Validate's (check) to say, with the field's name.
func (t *LocalText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil // as encoding/json leaves a field for null
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = LocalText{text: s}
		return nil
	case len(b) > 0 && b[0] == '{':
		var m map[string]string
		if err := json.Unmarshal(b, &m); err == nil {
			if m == nil {
				m = map[string]string{}
			}
			*t = LocalText{byLang: m}
			return nil
		}
	}
	// The decoder adds the field's name (jsonFieldError says what it must be).
	return &json.UnmarshalTypeError{Value: "value", Type: localTextType}
}

// check reports what is wrong with the text of field: an unknown language,
// an empty text in a language, or one longer than limit characters.
func (t LocalText) check(field string, limit int) error {
	if t.byLang == nil {
		return runesAtMost(field, t.text, limit)
	}
	if len(t.byLang) == 0 {
		return fieldErr(field, RuleTextOrLangs, "must be a text or name at least one language (%s)", strings.Join(vocab.Languages, ", ")).
			with("langs", strings.Join(vocab.Languages, ", "))
	}
	for _, l := range slices.Sorted(maps.Keys(t.byLang)) {
		sub := field + "." + l
		if !slices.Contains(vocab.Languages, l) {
			return fieldErr(sub, RuleLang, "is not a supported language: use %s", strings.Join(vocab.Languages, ", ")).
				with("langs", strings.Join(vocab.Languages, ", "))
		}
		if strings.TrimSpace(t.byLang[l]) == "" {
			return fieldErr(sub, RuleLangEmpty, "must not be empty (leave the language out to fall back to English)")
		}
		if err := runesAtMost(sub, t.byLang[l], limit); err != nil {
			return err
		}
	}
	return nil
}

func runesAtMost(field, v string, n int) error {
	if utf8.RuneCountInString(v) > n {
		return fieldErr(field, RuleMaxChars, "must be at most %d characters", n).with("n", n)
	}
	return nil
}
