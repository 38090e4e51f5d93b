package queue

import (
	"math"
	"net/url"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
)

// View is a ticket as every answer shows it: the enter and status API, the
// waiting page, every push message and the gates' answers. Its JSON is the
// API's ticket (docs/api.md, docs/openapi.yaml).
type View struct {
	Room   string `json:"room"`
	Ticket string `json:"ticket"`
	State  State  `json:"state"`
	// Display is what the waiting page shows for the ticket: vocab.DisplayOf
	// its state, method and reason (NewView's), the draw or maintenance
	// variant of a state, or the state's own.
	Display      vocab.Display `json:"display"`
	Position     int64         `json:"position"`
	Waiting      int64         `json:"waiting"`
	ETAS         *int64        `json:"eta_s"` // null while paused: nobody moves, so no honest estimate
	ETALowS      *int64        `json:"eta_low_s"`
	ETAHighS     *int64        `json:"eta_high_s"` // with eta_low_s, the range the wait most likely falls in; null with eta_s
	NextUpdateMS int64         `json:"next_update_ms"`
	Token        *string       `json:"token"`
	OrderableAt  *string       `json:"orderable_at"`
	RedirectURL  *string       `json:"redirect_url"`
	Paused       bool          `json:"paused"`
	AcceptURL    *string       `json:"accept_url"` // set when bypassed: the store is down, submit an intent there; with ordered, the intent's page
	// IntentID, with state ordered, is the visitor's intent from degraded
	// mode that stands as their order in this room.
	IntentID *string `json:"intent_id,omitempty"`
	// EntryPosition and EnteredAt are the place and time at entry, for the
	// page's progress since entry and "in line since"; 0 and null unless
	// waiting or admitted.
	EntryPosition int64   `json:"entry_position"`
	EnteredAt     *string `json:"entered_at"`
	// QueueingMethod names how the line admits: in a random line position,
	// entry_position and eta_s are 0, 0 and null (the page says "in the draw").
	QueueingMethod Method `json:"queueing_method"`
	// Reason says why a ticket is closed (ended, maintenance) or expired.
	Reason string `json:"reason,omitempty"`
	// SoldOutMessage is the room's, with state sold_out: a text or one per
	// language, as the room has it; the page picks its language's.
	SoldOutMessage LocalText `json:"sold_out_message,omitzero"`
	// RetryAfterS, with state full, is when to try entering again.
	RetryAfterS *int64 `json:"retry_after_s,omitempty"`
	// OpensAt is the room's scheduled opening, null without one. While the
	// state is scheduled the position is 0: unknown until the opening's draw.
	OpensAt *string `json:"opens_at"`
	// Stale: the store was too busy to read, and this is the waiting
	// ticket's last known place on this server; ask again later.
	Stale bool `json:"stale,omitempty"`
}

// ViewTime is the view's time format: RFC 3339 in UTC with milliseconds.
const ViewTime = "2006-01-02T15:04:05.000Z07:00"

// NewView is t as shown under its room's settings s at now. est estimates a
// waiter's wait (nil: none); tok is an admitted ticket's entry token, which
// also makes the redirect to the room's target. A bypassed ticket's accept
// URL is the server's to fill.
func NewView(t Ticket, s *Settings, est *Estimator, now time.Time, tok string) View {
	v := View{
		Room: t.Room, Ticket: t.ID, State: t.State, Position: t.Position, Waiting: t.Waiting,
		Paused: s.Paused, QueueingMethod: s.QueueingMethod, Reason: t.Reason, Stale: t.Stale,
	}
	if v.QueueingMethod == "" {
		v.QueueingMethod = MethodFIFO
	}
	v.Display = vocab.DisplayOf(v.State, v.QueueingMethod, v.Reason)
	if t.State == vocab.StateWaiting || t.State == vocab.StateAdmitted {
		v.EntryPosition = max(t.EntryPosition, t.Position)
		v.EnteredAt = stamp(t.EnteredAt)
	}
	if s.OpensAt != nil {
		v.OpensAt = stamp(*s.OpensAt)
	}
	switch t.State {
	case vocab.StateScheduled:
		v.Position = 0 // unknown until the opening's draw
		v.NextUpdateMS = scheduledInterval(s, now).Milliseconds()
	case vocab.StateWaiting:
		if est != nil && s.Ranked() {
			if e := est.Ticket(t, s, now); e.Known {
				v.ETAS, v.ETALowS, v.ETAHighS = seconds(e.Point), seconds(e.Low), seconds(e.High)
			}
		}
		v.NextUpdateMS = s.TierInterval(t.Position).Milliseconds()
		if !s.Ranked() {
			v.Position, v.EntryPosition = 0, 0 // a draw has no places
		}
	case vocab.StateAdmitted:
		redirect := withToken(s.TargetURL, tok)
		v.Token, v.OrderableAt, v.RedirectURL = &tok, stamp(t.OrderableAt), &redirect
		v.NextUpdateMS = s.TierInterval(1).Milliseconds()
	case vocab.StateSoldOut, vocab.StateClosed:
		if t.State == vocab.StateSoldOut {
			v.SoldOutMessage = s.SoldOutMessage
		}
		// Nothing moves until the operator undoes it: the slowest tier keeps
		// the place alive without a crowd of refreshes.
		v.NextUpdateMS = s.TierInterval(math.MaxInt64).Milliseconds()
	case vocab.StateFull:
		retry := int64(FullRetryAfter / time.Second)
		v.RetryAfterS, v.NextUpdateMS = &retry, FullRetryAfter.Milliseconds()
	default:
		v.NextUpdateMS = s.TierInterval(1).Milliseconds()
	}
	return v
}

// View is t as this server shows it now: its estimator, its clock, and an
// admitted ticket's entry token signed. The redirect to the room's target
// carries a fresh hand-off code (token.Keyset.NewHandoff) rather than the
// token, unless the line was made with TokenInURL.
func (l *Line) View(t Ticket, s *Settings) (View, error) {
	tok, err := l.Token(t)
	if err != nil {
		return View{}, err
	}
	now := l.clock.Now()
	v := NewView(t, s, l.eta, now, tok)
	if v.RedirectURL != nil && !l.tokenInURL {
		if code := l.keys.NewHandoff(t.Room, t.ID, now); code != "" {
			redirect := withParam(s.TargetURL, token.HandoffParam, code)
			v.RedirectURL = &redirect
		}
	}
	return v, nil
}

// OrderableTime is orderable_at as a time; zero without one.
func (v *View) OrderableTime() (time.Time, error) {
	if v.OrderableAt == nil {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, *v.OrderableAt)
}

// NextUpdate is how long until the ticket is worth asking about again.
func (v *View) NextUpdate() time.Duration { return time.Duration(v.NextUpdateMS) * time.Millisecond }

// seconds is a duration in whole seconds, rounded.
func seconds(d time.Duration) *int64 {
	n := int64(d.Round(time.Second) / time.Second)
	return &n
}

// stamp is t in the view's format; nil when t is zero.
func stamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(ViewTime)
	return &s
}

// scheduledInterval is how often a pre-queue page hears of its ticket: at
// the slowest tier's pace (nobody moves before the draw, and the draw is
// pushed at once), but not past the opening, where polling pages look again.
func scheduledInterval(s *Settings, now time.Time) time.Duration {
	every := s.TierInterval(math.MaxInt64)
	if s.OpensAt == nil {
		return every
	}
	if until := s.OpensAt.Sub(now); until > 0 && until < every {
		every = until + time.Second // just after the opening: the draw has run
	}
	return every
}

// withToken adds wr_token to the target URL, keeping its own query.
func withToken(target, tok string) string { return withParam(target, "wr_token", tok) }

func withParam(target, name, value string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}
