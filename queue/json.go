package queue

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
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
			return &FieldError{Field: field, Message: `must be a string or an object of strings by language ({"en": "…", "ko": "…"})`}
		}
		return &FieldError{Field: field, Message: "must be " + jsonKind(typeErr.Type.Kind().String())}
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Field: "body", Message: "is not valid JSON"}
	case errors.Is(err, io.EOF):
		return &FieldError{Field: "body", Message: "is empty"}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if name == "" {
			return &FieldError{Field: "body", Message: "has a field with an empty name"}
		}
		return &FieldError{Field: name, Message: "is not a known field"}
	default:
		return &FieldError{Field: "body", Message: err.Error()}
	}
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "a list"
	case "struct", "ptr":
		return "an object"
	}
	return "of another type"
}
