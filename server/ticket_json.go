package server

import (
	"math"
	"net/url"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// ticketJSON is the one ticket shape: enter, status and every push message.
type ticketJSON struct {
	Room         string      `json:"room"`
	Ticket       string      `json:"ticket"`
	State        queue.State `json:"state"`
	Position     int64       `json:"position"`
	Waiting      int64       `json:"waiting"`
	ETAS         *int64      `json:"eta_s"` // null while paused: nobody moves, so no honest estimate
	ETALowS      *int64      `json:"eta_low_s"`
	ETAHighS     *int64      `json:"eta_high_s"` // with eta_low_s, the range the wait most likely falls in; null with eta_s
	NextUpdateMS int64       `json:"next_update_ms"`
	Token        *string     `json:"token"`
	OrderableAt  *string     `json:"orderable_at"`
	RedirectURL  *string     `json:"redirect_url"`
	Paused       bool        `json:"paused"`
	AcceptURL    *string     `json:"accept_url"` // set when bypassed: Redis is down, submit an intent there
	// EntryPosition and EnteredAt are the place and time at entry, for the
	// page's progress since entry and "in line since"; 0 and null unless
	// waiting or admitted.
	EntryPosition int64   `json:"entry_position"`
	EnteredAt     *string `json:"entered_at"`
	// QueueingMethod names how the line admits: in a random line position,
	// entry_position and eta_s are 0, 0 and null (the page says "in the draw").
	QueueingMethod queue.Method `json:"queueing_method"`
	// Reason says why a ticket is closed (ended, maintenance) or expired.
	Reason string `json:"reason,omitempty"`
	// SoldOutMessage is the room's, with state sold_out: a text or one per
	// language, as the room has it; the page picks its language's.
	SoldOutMessage queue.LocalText `json:"sold_out_message,omitzero"`
	// RetryAfterS, with state full, is when to try entering again.
	RetryAfterS *int64 `json:"retry_after_s,omitempty"`
	// OpensAt is the room's scheduled opening, null without one. While the
	// state is scheduled the position is 0: unknown until the opening's draw.
	OpensAt *string `json:"opens_at"`
}

// jsonTime is the ticket's time format: RFC 3339 in UTC with milliseconds.
const jsonTime = "2006-01-02T15:04:05.000Z07:00"

// ticketViewer is what a ticket view needs of the line.
type ticketViewer interface {
	Token(t queue.Ticket) (string, error)
	Estimate(t queue.Ticket, s *queue.Settings) queue.Estimate
}

func newTicketJSON(sig ticketViewer, t queue.Ticket, s *queue.Settings) (ticketJSON, error) {
	v := ticketJSON{
		Room: t.Room, Ticket: t.ID, State: t.State, Position: t.Position, Waiting: t.Waiting,
		Paused: s.Paused, QueueingMethod: s.QueueingMethod, Reason: t.Reason,
	}
	if v.QueueingMethod == "" {
		v.QueueingMethod = queue.MethodFIFO
	}
	if t.State == queue.StateWaiting || t.State == queue.StateAdmitted {
		v.EntryPosition = max(t.EntryPosition, t.Position)
		if !t.EnteredAt.IsZero() {
			at := t.EnteredAt.UTC().Format(jsonTime)
			v.EnteredAt = &at
		}
	}
	if s.OpensAt != nil {
		at := s.OpensAt.UTC().Format(jsonTime)
		v.OpensAt = &at
	}
	switch t.State {
	case queue.StateScheduled:
		v.NextUpdateMS = scheduledInterval(s, nowOf(sig)).Milliseconds()
	case queue.StateWaiting:
		if e := sig.Estimate(t, s); e.Known && s.Ranked() {
			v.ETAS, v.ETALowS, v.ETAHighS = seconds(e.Point), seconds(e.Low), seconds(e.High)
		}
		v.NextUpdateMS = s.TierInterval(t.Position).Milliseconds()
		if !s.Ranked() {
			v.Position, v.EntryPosition = 0, 0 // a draw has no places
		}
	case queue.StateAdmitted:
		tok, err := sig.Token(t)
		if err != nil {
			return ticketJSON{}, err
		}
		at := t.OrderableAt.UTC().Format(jsonTime)
		redirect := withToken(s.TargetURL, tok)
		v.Token, v.OrderableAt, v.RedirectURL = &tok, &at, &redirect
		v.NextUpdateMS = s.TierInterval(1).Milliseconds()
	case queue.StateSoldOut, queue.StateClosed:
		v.SoldOutMessage = soldOutMessage(t, s)
		// Nothing moves until the operator undoes it: the slowest tier keeps
		// the place alive without a crowd of refreshes.
		v.NextUpdateMS = s.TierInterval(math.MaxInt64).Milliseconds()
	case queue.StateFull:
		retry := int64(queue.FullRetryAfter / time.Second)
		v.RetryAfterS, v.NextUpdateMS = &retry, queue.FullRetryAfter.Milliseconds()
	default:
		v.NextUpdateMS = s.TierInterval(1).Milliseconds()
	}
	return v, nil
}

// seconds is a duration in whole seconds, rounded.
func seconds(d time.Duration) *int64 {
	n := int64(d.Round(time.Second) / time.Second)
	return &n
}

func soldOutMessage(t queue.Ticket, s *queue.Settings) queue.LocalText {
	if t.State == queue.StateSoldOut {
		return s.SoldOutMessage
	}
	return queue.LocalText{}
}

// scheduledInterval is how often a pre-queue page hears of its ticket: at
// the slowest tier's pace (nobody moves before the draw, and the draw is
// pushed at once), but not past the opening, where polling pages look again.
func scheduledInterval(s *queue.Settings, now time.Time) time.Duration {
	every := s.TierInterval(math.MaxInt64)
	if until := s.OpensAt.Sub(now); until > 0 && until < every {
		every = until + time.Second // just after the opening: the draw has run
	}
	return every
}

// nowOf is the line's clock when the signer has one (*queue.Line does), so
// tests with a fake clock see the pre-queue's interval they set up.
func nowOf(sig ticketViewer) time.Time {
	if c, ok := sig.(interface{ Now() time.Time }); ok {
		return c.Now()
	}
	return time.Now()
}

// withToken adds wr_token to the target URL, keeping its own query.
func withToken(target, tok string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set("wr_token", tok)
	u.RawQuery = q.Encode()
	return u.String()
}
