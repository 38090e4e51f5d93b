package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
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

// droppedFields lists, in the order the settings are declared
// (queue.SettingFields), the top-level fields whose stored value differs from
// the default and that sent does not name.
func droppedFields(sent map[string]json.RawMessage, old queue.Settings) []string {
	def := queue.DefaultSettings()
	def.Normalize()
	stored, defaults := fieldsOf(old), fieldsOf(def)
	var dropped []string
	for _, f := range queue.SettingFields {
		name, _, _ := strings.Cut(f.Name, ".") // bot_protection.pow_cost: the room's bot_protection
		if _, ok := sent[name]; ok || slices.Contains(dropped, name) {
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
