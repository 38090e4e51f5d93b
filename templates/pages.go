package templates

func serverFault(status int) bool { return status >= 500 }

func errorLayout(lang Lang, status int) LayoutProps {
	lp := LayoutProps{Lang: lang, Title: errorHeading(lang, status)}
	if serverFault(status) {
		// A fault like Redis being down passes: try again by itself.
		lp.RefreshSeconds = ErrorRetrySeconds
	}
	return lp
}

func errorHeading(lang Lang, status int) string {
	if serverFault(status) {
		return T(lang, "error.busy.heading")
	}
	return T(lang, "error.heading")
}

func errorBody(lang Lang, status int) string {
	if serverFault(status) {
		return T(lang, "error.busy.body")
	}
	return T(lang, "error.body")
}

// roomOrPlaceholder names the room in the operator's hint, or where it goes.
func roomOrPlaceholder(room string) string {
	if room == "" {
		return "{room}"
	}
	return room
}
