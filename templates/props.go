package templates

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// Theme is a room's look: an accent colour (#rgb or #rrggbb; anything else
// falls back to the default) and an optional logo URL.
type Theme struct{ Color, LogoURL string }

// WaitingProps is everything the waiting page shows.
type WaitingProps struct {
	Lang                 Lang
	Room, Title, Message string
	Theme                Theme
	TicketJSON           string // the initial ticket JSON, put into a data attribute for the client
	Ticket               TicketView
	EntryPosition        int64 // position at entry, for the progress bar
	LastUpdate           time.Time
	Now                  time.Time
	// ChallengeURL, with Ticket.State StateChecking, is where the script
	// gets the challenge it solves before it enters.
	ChallengeURL string
	// HeldFor is how long an admitted turn is held (session_ttl_s);
	// ArriveWithin, when not zero, how soon the visitor must reach checkout
	// before the turn passes on (arrival_window_s).
	HeldFor, ArriveWithin time.Duration
	// ShopURL, when set, is the link back to the shop on the pages that end
	// a visit (shop_url).
	ShopURL string
}

// TicketView is the ticket as the page needs it. ETASeconds < 0 means no
// estimate yet; ETALowSeconds and ETAHighSeconds < 0, no range.
type TicketView struct {
	Ticket                        string
	State                         vocab.State
	Position, Waiting             int64
	ETASeconds                    int64
	ETALowSeconds, ETAHighSeconds int64
	NextUpdateMS                  int64
	Paused                        bool
	Token, RedirectURL, AcceptURL string
	OrderableAt                   time.Time
	EnteredAt                     time.Time // zero when the JSON has none
	// Method is the room's queueing method; Reason why a ticket is closed
	// or expired; SoldOutMessage the room's, when sold out; RetryAfterS,
	// when full, when to try again.
	Method         vocab.Method
	Reason         string
	SoldOutMessage string
	RetryAfterS    int64
	OpensAt        time.Time // the scheduled opening; zero without one
}

// StateChecking is the page's own: no place yet, the browser is solving
// the room's proof-of-work challenge.
const StateChecking = vocab.State(vocab.DisplayChecking)

// TicketViewFromJSON reads the API's ticket JSON (queue.View).
func TicketViewFromJSON(b []byte) (TicketView, error) {
	var j queue.View
	if err := json.Unmarshal(b, &j); err != nil {
		return TicketView{}, err
	}
	return TicketViewOf(j)
}

// TicketViewOf is the ticket view (queue.View) as the page needs it. Its
// SoldOutMessage is the English one. AcceptURL is in the view only when the
// server filled accept_url.
func TicketViewOf(j queue.View) (TicketView, error) {
	v := TicketView{
		Ticket: j.Ticket, State: j.State, Position: j.Position, Waiting: j.Waiting,
		ETASeconds: -1, ETALowSeconds: -1, ETAHighSeconds: -1, NextUpdateMS: j.NextUpdateMS, Paused: j.Paused,
		Token: deref(j.Token), RedirectURL: deref(j.RedirectURL), AcceptURL: deref(j.AcceptURL),
		Method: j.QueueingMethod, Reason: j.Reason, SoldOutMessage: j.SoldOutMessage.String(),
	}
	if j.RetryAfterS != nil {
		v.RetryAfterS = *j.RetryAfterS
	}
	if j.ETAS != nil {
		v.ETASeconds = *j.ETAS
	}
	if j.ETALowS != nil && j.ETAHighS != nil {
		v.ETALowSeconds, v.ETAHighSeconds = *j.ETALowS, *j.ETAHighS
	}
	var err error
	if v.OrderableAt, err = parseStamp(j.OrderableAt); err != nil {
		return TicketView{}, err
	}
	if v.EnteredAt, err = parseStamp(j.EnteredAt); err != nil {
		return TicketView{}, err
	}
	if v.OpensAt, err = parseStamp(j.OpensAt); err != nil {
		return TicketView{}, err
	}
	return v, nil
}

// parseStamp reads one of the view's times; nil is the zero time.
func parseStamp(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, *s)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// defaultRefreshSeconds paces a no-script page when the ticket names no interval.
const defaultRefreshSeconds = 5

func (p WaitingProps) title() string {
	if p.Title != "" {
		return p.Title
	}
	return T(p.Lang, "page.title")
}

// pageTitle puts the place in line first, so it shows in a background tab.
func (p WaitingProps) pageTitle() string {
	if p.Ticket.State == vocab.StateWaiting && p.Ticket.Position > 0 && p.Ticket.Method != vocab.MethodRandom {
		return "(" + FormatNumber(p.Lang, p.Ticket.Position) + ") " + p.title()
	}
	return p.title()
}

// block is the page block the ticket shows: its display state
// (vocab.DisplayOf, the rule queue.View's display carries to the script).
func (p WaitingProps) block() string {
	return string(vocab.DisplayOf(p.Ticket.State, p.Ticket.Method, p.Ticket.Reason))
}

// inLine reports whether the ticket holds a place the line keeps live: the
// waiting block or the draw, which share the live status and leaving.
func (p WaitingProps) inLine() bool {
	b := p.block()
	return b == string(vocab.DisplayWaiting) || b == string(vocab.DisplayDraw)
}

// refreshSeconds is the tier interval rounded up to whole seconds.
func (p WaitingProps) refreshSeconds() int {
	if p.Ticket.NextUpdateMS <= 0 {
		return defaultRefreshSeconds
	}
	return int(max((p.Ticket.NextUpdateMS+999)/1000, 1))
}

// secondsToOrderable is the countdown, rounded up, never negative.
func (p WaitingProps) secondsToOrderable() int64 {
	d := p.Ticket.OrderableAt.Sub(p.Now)
	if p.Ticket.OrderableAt.IsZero() || d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

func (p WaitingProps) entryPosition() int64 {
	return max(p.EntryPosition, p.Ticket.Position)
}

// progress is how far, in percent, this visitor has come since entry: of
// the places from the one at entry to the door, the share passed. It is
// never 100 while waiting (even at #1, or paused): only admission fills it.
// The client's progressPercent in web/view.ts is the same.
func (p WaitingProps) progress() int64 {
	return progressPercent(p.entryPosition(), p.Ticket.Position)
}

// heldWords says how long an admitted turn is held and, with an arrival
// window, how soon to reach checkout; empty when the page does not know.
func (p WaitingProps) heldWords() string {
	if p.HeldFor <= 0 {
		return ""
	}
	out := strings.Replace(T(p.Lang, "admitted.held"), "{d}", DurationWords(p.Lang, p.HeldFor), 1)
	if p.ArriveWithin > 0 {
		out += " " + strings.Replace(T(p.Lang, "admitted.arrive"), "{d}", DurationWords(p.Lang, p.ArriveWithin), 1)
	}
	return out
}

// etaWords is the estimate, or none while paused (web/view.ts's rule).
func (p WaitingProps) etaWords() string {
	if p.Ticket.Paused {
		return T(p.Lang, "eta.paused")
	}
	return ETARangeWords(p.Lang, p.Ticket.ETALowSeconds, p.Ticket.ETASeconds, p.Ticket.ETAHighSeconds)
}

func progressPercent(entry, pos int64) int64 {
	if pos <= 0 {
		return 100
	}
	// Being next counts as the last step: see web/view.ts.
	entry = max(entry, pos)
	return min(100*(entry-pos+1)/(entry+1), 99) // rounded down
}

// enteredAt is when the visitor joined, or zero when unknown.
func (p WaitingProps) enteredAt() time.Time { return p.Ticket.EnteredAt }

func (p WaitingProps) lastUpdate() time.Time {
	if p.LastUpdate.IsZero() {
		return p.Now
	}
	return p.LastUpdate
}

// layout picks the page's self-refresh: the tier interval while waiting,
// the redirect once orderable when admitted, straight on when bypassed.
func (p WaitingProps) layout() LayoutProps {
	lp := LayoutProps{Lang: p.Lang, Title: p.pageTitle(), Theme: p.Theme, Script: true}
	switch p.Ticket.State {
	case vocab.StateWaiting, vocab.StateScheduled, vocab.StateSoldOut, vocab.StateFull:
		// A sold out page comes back when the operator undoes it; a full
		// one tries again after its hint.
		lp.RefreshSeconds = p.refreshSeconds()
	case vocab.StateClosed:
		if p.block() == string(vocab.DisplayMaintenance) { // an ended room does not reopen
			lp.RefreshSeconds = p.refreshSeconds()
		}
	case vocab.StateAdmitted:
		if u := safeURL(p.Ticket.RedirectURL); u != "" {
			lp.RefreshSeconds, lp.RefreshURL = int(p.secondsToOrderable()), u
		}
	case vocab.StateBypassed:
		lp.RefreshURL = safeURL(p.Ticket.AcceptURL)
	}
	return lp
}

// secondsToOpening is the pre-queue's countdown, rounded up, never negative.
func (p WaitingProps) secondsToOpening() int64 {
	d := p.Ticket.OpensAt.Sub(p.Now)
	if p.Ticket.OpensAt.IsZero() || d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// openingCountdown is the countdown's text, or "drawing" once it is over.
func (p WaitingProps) openingCountdown() string {
	if s := p.secondsToOpening(); s > 0 {
		return strings.Replace(T(p.Lang, "scheduled.countdown"), "{t}", CountdownClock(s), 1)
	}
	return T(p.Lang, "scheduled.drawing")
}

// scheduledBody says when places are drawn, in UTC with the date when that
// is not today (the script rewrites it in the visitor's zone).
func (p WaitingProps) scheduledBody() string {
	return strings.Replace(T(p.Lang, "scheduled.body"), "{time}", FormatMoment(p.Lang, p.Ticket.OpensAt, p.Now), 1)
}

// checkAgainURL reloads the checking page in the same language.
func (p WaitingProps) checkAgainURL() string {
	return "/rooms/" + url.PathEscape(p.Room) + "?lang=" + url.QueryEscape(string(p.Lang))
}

// expiredKey is the catalogue key of the expired block's part ("heading",
// "body") for an ended ticket's reason: a slot that lapsed unused (no_show)
// or idle says so, anything else is a place that expired.
func expiredKey(reason, part string) string {
	if vocab.Lapsed(reason) {
		return "expired." + reason + "." + part
	}
	return "expired." + part
}

// enterAgainURL starts over in the same room and language.
func (p WaitingProps) enterAgainURL() string {
	return "/rooms/" + url.PathEscape(p.Room) + "?again=1&lang=" + url.QueryEscape(string(p.Lang))
}

// safeURL keeps http(s) and relative URLs; anything else (javascript:,
// data:) becomes "", so no link or refresh is rendered.
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return ""
	}
	switch u.Scheme {
	case "http", "https", "":
		return s
	}
	return ""
}
