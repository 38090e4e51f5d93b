package server

import (
	"errors"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// One order per visitor, whichever way it came: a visitor who left an intent
// while the line was down, and whose intent checkout has not rejected, takes
// no place in the line when it is back (unless the room's
// checkout_after_intent allows both). A rejected intent frees them: they
// enter as anyone, and their place from before (their ticket, or the place
// mark of degraded mode) is theirs again.

// errOrdered is enterPlace's answer for such a visitor.
type errOrdered struct{ intentID string }

func (e *errOrdered) Error() string {
	return "the visitor's intent " + e.intentID + " is their order in this room"
}

// orderedOf reports the visitor's standing intent when the room lets it
// stand alone.
func orderedOf(line enterer, s queue.Settings, room, identity string) error {
	if s.CheckoutAfterIntent {
		return nil
	}
	if id, ok := line.HeldIntent(room, identity); ok {
		return &errOrdered{intentID: id}
	}
	return nil
}

// orderedView is the enter API's answer: state "ordered", no place, and the
// intent's id and page.
func orderedView(room string, err error) (queue.View, bool) {
	var oe *errOrdered
	if !errors.As(err, &oe) {
		return queue.View{}, false
	}
	u := orderedURL(room, oe.intentID, "")
	id := oe.intentID
	return queue.View{Room: room, State: vocab.StateOrdered, Display: vocab.DisplayOrdered, IntentID: &id, AcceptURL: &u}, true
}

// orderedURL is the accept page showing the intent, told not to send the
// visitor back to the line.
func orderedURL(room, intentID, lang string) string {
	q := url.Values{"intent": {intentID}, "ordered": {"1"}}
	if lang != "" {
		q.Set("lang", lang)
	}
	return acceptURL(room) + "?" + q.Encode()
}

// redirectOrdered sends the room page's visitor to their intent's page.
func redirectOrdered(c echo.Context, room string, err error) (bool, error) {
	var oe *errOrdered
	if !errors.As(err, &oe) {
		return false, nil
	}
	return true, c.Redirect(303, orderedURL(room, oe.intentID, string(pageLang(c))))
}
