package templates

import (
	"strconv"
	"strings"

	"github.com/waitroom/waitroom/queue"
)

// AdminFieldMessage says a refused setting in lang: the rule it breaks in
// the catalogue's words ("admin.rule.<rule>", filled from its figures),
// after where in the setting when the error names a part of it (a tier, an
// item of a list, a language). A rule the catalogue lacks shows the API's
// English message.
func AdminFieldMessage(lang Lang, fe *queue.FieldError) string {
	key := "admin.rule." + string(fe.Rule)
	msg := T(lang, key)
	if fe.Rule == "" || msg == key {
		return fe.Error()
	}
	for name, v := range fe.Params {
		var s string
		switch v := v.(type) {
		case int64:
			s = FormatNumber(lang, v)
		case string:
			s = v
		default:
			continue
		}
		msg = strings.ReplaceAll(msg, "{"+name+"}", s)
	}
	return adminFieldPart(lang, fe.Field, msg)
}

// adminFieldPart puts where in the setting before msg: "tiers[1].interval_ms"
// is the second tier, "allowed_embedders[0]" the first item, "title.ko" the
// Korean title.
func adminFieldPart(lang Lang, field, msg string) string {
	if i := strings.IndexByte(field, '['); i > 0 {
		j := strings.IndexByte(field[i:], ']')
		n, err := strconv.ParseInt(field[i+1:i+max(j, 1)], 10, 64)
		if j < 0 || err != nil {
			return msg
		}
		key := "admin.rule.at_item"
		if field[:i] == "tiers" {
			key = "admin.rule.at_tier"
		}
		return withPlaceholders(T(lang, key), "n", FormatNumber(lang, n+1), "message", msg)
	}
	base, l, ok := strings.Cut(field, ".")
	if f, found := queue.FindSettingField(base); ok && found && f.PerLang {
		name := T(lang, "admin.lang_name."+l)
		if name == "admin.lang_name."+l {
			name = l
		}
		return withPlaceholders(T(lang, "admin.rule.at_lang"), "lang", name, "message", msg)
	}
	return msg
}
