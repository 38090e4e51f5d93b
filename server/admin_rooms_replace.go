package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/waitroom/waitroom/queue"
)

// refuseDroppedFields answers 409 when a PUT body leaves out fields that the
// stored room sets to other than their default: those fields would be reset.
// A field the body names, even at its default or as null, is a reset on
// purpose.
func refuseDroppedFields(body []byte, old queue.Settings) error {
	var sent map[string]json.RawMessage
	if json.Unmarshal(body, &sent) != nil {
		return nil // ParseSettings already accepted it; nothing to compare
	}
	dropped := droppedFields(sent, old)
	if len(dropped) == 0 {
		return nil
	}
	return &apiError{
		Status: http.StatusConflict, Code: "replace", Field: dropped[0],
		Message: "PUT replaces the whole room, and this body leaves out " + strings.Join(dropped, ", ") +
			", which the room has set: send the whole room (as GET answers it) or use PATCH to change only the fields you name (null resets one to its default)",
	}
}

// droppedFields lists, in the room's JSON order, the top-level fields whose
// stored value differs from the default and that sent does not name.
func droppedFields(sent map[string]json.RawMessage, old queue.Settings) []string {
	def := queue.DefaultSettings()
	def.Normalize()
	stored, defaults := fieldsOf(old), fieldsOf(def)
	var dropped []string
	for _, name := range jsonKeysInOrder(old) {
		if _, ok := sent[name]; ok {
			continue
		}
		if !bytes.Equal(stored[name], defaults[name]) {
			dropped = append(dropped, name)
		}
	}
	return dropped
}

func fieldsOf(s queue.Settings) map[string]json.RawMessage {
	data, _ := json.Marshal(s)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	return m
}

// jsonKeysInOrder is the order Settings marshals its fields in, so that the
// error lists them as GET shows them.
func jsonKeysInOrder(s queue.Settings) []string {
	data, _ := json.Marshal(s)
	dec := json.NewDecoder(bytes.NewReader(data))
	var keys []string
	if _, err := dec.Token(); err != nil {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}
