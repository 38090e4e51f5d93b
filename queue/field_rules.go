package queue

import "fmt"

// Rule names what a refused setting breaks, without words: the admin API
// answers FieldError.Message (English), a page says the rule in its own
// language (templates: "admin.rule.<rule>", filled from Params).
type Rule string

// The rules a FieldError can name.
const (
	RuleBetween        Rule = "between"          // min, max
	RuleBetweenNoLimit Rule = "between_no_limit" // max; 0 is no limit
	RuleBetweenNoCap   Rule = "between_no_cap"   // max; 0 is no cap
	RuleBetweenOff     Rule = "between_off"      // max; 0 is off
	RuleMaxChars       Rule = "max_chars"        // n
	RuleMinChars       Rule = "min_chars"        // n; when set at all
	RuleMaxItems       Rule = "max_items"        // n
	RuleOneOf          Rule = "one_of"           // choices
	RuleBeforeEndsAt   Rule = "before_ends_at"
	RuleDateTime       Rule = "datetime" // RFC 3339
	RuleColour         Rule = "colour"
	RuleRequired       Rule = "required"
	RuleURLChars       Rule = "url_chars"
	RuleURL            Rule = "url"
	RuleURLScheme      Rule = "url_scheme"
	RuleURLHost        Rule = "url_host"
	RuleURLUserInfo    Rule = "url_user_info"
	RuleURLAbsolute    Rule = "url_absolute"
	RuleURLOrPath      Rule = "url_or_path"
	RuleOrigin         Rule = "origin"
	RuleOriginBare     Rule = "origin_bare"
	RuleOriginAsSent   Rule = "origin_as_sent" // origin: as the browser writes it
	RuleAdaptiveNeeded Rule = "adaptive_needed"
	RulePrometheusURL  Rule = "prometheus_url"
	RuleNeededBySignal Rule = "needed_by_signal"   // signal
	RulePositiveSignal Rule = "positive_by_signal" // signal
	RulePositive       Rule = "positive"
	RuleBelowOpenAt    Rule = "below_open_at"
	RuleAbandonAfter   Rule = "abandon_after" // min, longest (ms)
	RuleTiersEmpty     Rule = "tiers_empty"
	RuleTierOpenLast   Rule = "tier_open_last" // only the last tier is open-ended
	RuleTierAscending  Rule = "tier_ascending"
	RuleTierLastOpen   Rule = "tier_last_open" // the last tier must be open-ended
	RuleTextOrLangs    Rule = "text_or_langs"  // langs
	RuleLang           Rule = "lang"           // langs
	RuleLangEmpty      Rule = "lang_empty"
	RuleNumber         Rule = "number"
	RuleString         Rule = "string"
	RuleBool           Rule = "bool"
	RuleList           Rule = "list"
	RuleObject         Rule = "object"
	RuleType           Rule = "type"
	RuleLocalText      Rule = "local_text"
	RuleJSON           Rule = "json"
	RuleJSONEmpty      Rule = "json_empty"
	RuleOneObject      Rule = "one_object"
	RuleUnknownField   Rule = "unknown_field"
	RuleEmptyName      Rule = "empty_name"
)

// Rules lists every Rule, for catalogues to cover.
var Rules = []Rule{
	RuleBetween, RuleBetweenNoLimit, RuleBetweenNoCap, RuleBetweenOff, RuleMaxChars, RuleMinChars, RuleMaxItems, RuleOneOf,
	RuleBeforeEndsAt, RuleDateTime, RuleColour, RuleRequired, RuleURLChars, RuleURL, RuleURLScheme, RuleURLHost,
	RuleURLUserInfo, RuleURLAbsolute, RuleURLOrPath, RuleOrigin, RuleOriginBare, RuleOriginAsSent,
	RuleAdaptiveNeeded, RulePrometheusURL, RuleNeededBySignal, RulePositiveSignal, RulePositive,
	RuleBelowOpenAt, RuleAbandonAfter, RuleTiersEmpty, RuleTierOpenLast, RuleTierAscending, RuleTierLastOpen,
	RuleTextOrLangs, RuleLang, RuleLangEmpty, RuleNumber, RuleString, RuleBool, RuleList, RuleObject, RuleType,
	RuleLocalText, RuleJSON, RuleJSONEmpty, RuleOneObject, RuleUnknownField, RuleEmptyName,
}

// FieldError names the setting that is wrong, so the API can say which.
// Rule and Params say what Message says, for pages in other languages;
// a Params value is an int64 or a string.
type FieldError struct {
	Field   string
	Message string
	Rule    Rule
	Params  map[string]any
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// fieldErr is a FieldError on field saying rule: English words, then the
// rule's figures as name, value pairs.
func fieldErr(field string, rule Rule, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...), Rule: rule}
}

// with adds the rule's figures as name, value pairs.
func (e *FieldError) with(kv ...any) *FieldError {
	if e.Params == nil {
		e.Params = map[string]any{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		name, _ := kv[i].(string)
		switch v := kv[i+1].(type) {
		case int:
			e.Params[name] = int64(v)
		default:
			e.Params[name] = v
		}
	}
	return e
}

// at is e on field (checks shared by fields say nothing of where).
func (e *FieldError) at(field string) *FieldError {
	e.Field = field
	return e
}

// choices lists the values a setting takes, for RuleOneOf.
func choices[T ~string](cs ...T) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += ", "
		}
		out += string(c)
	}
	return out
}
