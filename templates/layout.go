package templates

import "strconv"

// LayoutProps are the parts of a page outside its content.
type LayoutProps struct {
	Lang  Lang
	Title string
	Theme Theme
	// Script loads the waiting page client. It then takes over from the
	// refresh below, which moves into <noscript> so it only runs without it.
	Script bool
	// RefreshSeconds > 0 or a RefreshURL adds <meta http-equiv="refresh">:
	// reload (or go to RefreshURL) after that many seconds.
	RefreshSeconds int
	RefreshURL     string
}

func (p LayoutProps) refresh() bool { return p.RefreshSeconds > 0 || p.RefreshURL != "" }

func (p LayoutProps) refreshContent() string {
	s := strconv.Itoa(max(p.RefreshSeconds, 0))
	if p.RefreshURL != "" {
		s += ";url=" + p.RefreshURL
	}
	return s
}
