package gatekit

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// WantsHTML reports whether the request is a browser's: a navigation, or an
// Accept that names HTML at least as highly as JSON. A bare */* or no Accept
// is an API client (curl, fetch), which is better served by a JSON answer
// than by a redirect it would follow to a page it cannot use.
func WantsHTML(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return true
	}
	var html, json float64
	for _, part := range r.Header.Values("Accept") {
		for item := range strings.SplitSeq(part, ",") {
			typ, q, ok := mediaRange(item)
			if !ok {
				continue
			}
			switch {
			case typ == "text/html", typ == "application/xhtml+xml", typ == "text/*":
				html = max(html, q)
			case typ == "application/json", typ == "application/*",
				strings.HasPrefix(typ, "application/") && strings.HasSuffix(typ, "+json"):
				json = max(json, q)
			}
		}
	}
	return html > 0 && html >= json
}

// mediaRange reads one Accept item, leniently: a broken q counts as 1.
func mediaRange(item string) (string, float64, bool) {
	item = strings.TrimSpace(item)
	if item == "" {
		return "", 0, false
	}
	typ, params, err := mime.ParseMediaType(item)
	if err != nil {
		// mime refuses some forms browsers send; keep the type before any ';'.
		typ, _, _ = strings.Cut(item, ";")
		typ = strings.ToLower(strings.TrimSpace(typ))
		params = nil
	}
	q := 1.0
	if s, ok := params["q"]; ok {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v <= 1 {
			q = v
		}
	}
	return typ, q, typ != ""
}
