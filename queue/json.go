package queue

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// jsonFieldError turns a decoding error into a FieldError naming the field.
func jsonFieldError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		if typeErr.Type == localTextType {
			return fieldErr(field, RuleLocalText, `must be a string or an object of strings by language ({"en": "…", "ko": "…"})`)
		}
		kind, rule := jsonKind(typeErr.Type.Kind().String())
		return fieldErr(field, rule, "must be %s", kind)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return fieldErr("body", RuleJSON, "is not valid JSON")
	case errors.Is(err, io.EOF):
		return fieldErr("body", RuleJSONEmpty, "is empty")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if name == "" {
			return fieldErr("body", RuleEmptyName, "has a field with an empty name")
		}
		return fieldErr(name, RuleUnknownField, "is not a known field")
	default:
		return fieldErr("body", RuleJSON, "%s", err.Error())
	}
}

// jsonKind is what a JSON value of Go kind k must be, in words and as a rule.
func jsonKind(k string) (string, Rule) {
	switch k {
	case "int", "int64", "int32", "float64":
		return "a number", RuleNumber
	case "string":
		return "a string", RuleString
	case "bool":
		return "true or false", RuleBool
	case "slice":
		return "a list", RuleList
	case "struct", "ptr":
		return "an object", RuleObject
	}
	return "of another type", RuleType
}

// badDateTime names the date-time setting that err (a decode of data) could
// not parse: time's own error names neither the field nor the format a
// person should write.
func badDateTime(data []byte, err error) *FieldError {
	var parseErr *time.ParseError
	if !errors.As(err, &parseErr) {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return nil
	}
	for _, f := range SettingFields {
		raw, ok := fields[f.Name]
		if f.Kind != KindDateTime || !ok {
			continue
		}
		var t *time.Time
		if json.Unmarshal(raw, &t) != nil {
			return fieldErr(f.Name, RuleDateTime, "use RFC 3339, e.g. 2026-12-01T10:00:00+09:00")
		}
	}
	return nil
}
