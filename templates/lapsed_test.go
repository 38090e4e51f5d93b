package templates

import (
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/vocab"
)

// TestWaitingPageLapsed: a slot that lapsed says why, in every language,
// and offers to join again; another expired ticket keeps the usual words.
func TestWaitingPageLapsed(t *testing.T) {
	for _, c := range []struct {
		lang          Lang
		reason        string
		heading, body string
	}{
		{English, "no_show", "Your turn has lapsed", "You did not reach checkout in time"},
		{English, "idle", "Your turn has lapsed", "There was no activity at checkout"},
		{Korean, "no_show", "차례가 지나갔습니다", "제때 결제 페이지에 오지 않아"},
		{Korean, "idle", "차례가 지나갔습니다", "한동안 아무 활동이 없어"},
		{English, "abandoned", "Your place in line has expired", "This place is no longer held"},
	} {
		p := waitingProps(c.lang)
		p.Ticket = TicketView{State: vocab.StateExpired, Reason: c.reason}
		doc := render(t, WaitingPage(p))
		if !visible(t, doc, "expired") {
			t.Fatalf("%s %s: expired block hidden", c.lang, c.reason)
		}
		if got := text(t, doc, "expired-heading"); got != c.heading {
			t.Errorf("%s %s: heading %q", c.lang, c.reason, got)
		}
		if got := text(t, doc, "expired-body"); !strings.Contains(got, c.body) {
			t.Errorf("%s %s: body %q", c.lang, c.reason, got)
		}
		if href, _ := byTestID(doc, "enter-again").Attr("href"); !strings.Contains(href, "again=1") {
			t.Errorf("%s %s: enter-again %q", c.lang, c.reason, href)
		}
	}
}
