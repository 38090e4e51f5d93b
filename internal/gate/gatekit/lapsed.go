package gatekit

import (
	"net/http"
	"net/url"

	"github.com/waitroom/waitroom/internal/vocab"
)

// toWaitingPageAfter sends a browser whose token was refused to the waiting
// page; when its slot lapsed (no_show, idle) the page is told why
// (?lapsed=<reason>), so it says so and offers to join again.
func (g *Gate) toWaitingPageAfter(w http.ResponseWriter, r *http.Request, refused string) {
	if !vocab.Lapsed(refused) {
		g.toWaitingPage(w, r)
		return
	}
	g.cfg.Cookies.remember(w, r)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, withLapsed(g.cfg.WaitingURL, refused), http.StatusFound)
}

// withLapsed adds lapsed=reason to the waiting page's URL.
func withLapsed(waiting, reason string) string {
	u, err := url.Parse(waiting)
	if err != nil {
		return waiting
	}
	q := u.Query()
	q.Set("lapsed", reason)
	u.RawQuery = q.Encode()
	return u.String()
}
