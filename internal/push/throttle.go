package push

import (
	"bytes"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// final reports whether a state ends the wait: it is pushed at once and the
// connection closes after a grace. A sold out or closed (maintenance) ticket
// keeps its place while the operator may undo it: its page stays connected.
func final(state vocab.State) bool {
	return state != vocab.StateWaiting && state != vocab.StateSoldOut && state != vocab.StateClosed
}

// slot is how long a ticket may go unfetched: its tier interval, but at most
// MaxSilence, which doubles as the sign of life. Settled tickets need no
// position updates, so they are only kept alive.
func (h *Hub) slot(t *ticket) time.Duration {
	if t.state != "" && final(t.state) {
		return h.o.MaxSilence
	}
	return min(max(t.interval, 0), h.o.MaxSilence)
}

type verdict int

const (
	skip  verdict = iota // nothing new for this connection
	send                 // queue it now
	later                // changed, but the tier interval since the last send has not passed
)

// decide applies the tier throttle to one connection. Final states and
// forced pushes (Notify, NotifyRoom) only skip an unchanged payload.
func decide(c *client, u Update, now time.Time, forced bool) verdict {
	if bytes.Equal(c.lastSent, u.Payload) {
		return skip
	}
	// (A connection sent nothing yet has no throttle clock: Sub would saturate and the slack overflow.)
	if forced || final(u.State) || c.lastSentAt.IsZero() || now.Sub(c.lastSentAt)+dueSlack >= u.Interval {
		return send
	}
	return later
}
