package vocab

// Languages the pages are written in, as BCP 47 tags: the default first.
// A room's texts (title, message, …) may be given per language in these.
const (
	LangEnglish = "en"
	LangKorean  = "ko"
)

// Languages lists the supported languages, the default first. A new
// language is one more line here and its catalogue in templates/i18n.go.
var Languages = []string{LangEnglish, LangKorean}
