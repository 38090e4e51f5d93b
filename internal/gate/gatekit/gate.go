// Package gatekit is what waitroom's gates share: the reverse proxy that
// runs inside waitroom and the middleware that shops import. It decides,
// per request, whether a visitor passes to checkout, goes to the line, or
// waits for the start of its turn, and answers browsers and API clients
// each in the way they can use.
package gatekit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// Verdict is a backend's word on an entry token.
type Verdict struct {
	Valid bool
	// Reason when not valid: malformed, forged, wrong_room, not_yet_valid,
	// expired, completed, reclaimed, left, unknown.
	Reason    string
	Ticket    string    // jti, when known
	Subject   string    // sub, when known
	NotBefore time.Time // known when valid or not yet valid
	ExpiresAt time.Time // exp, when known
	Intent    string    // the "intent" claim: the holder's order from degraded mode, when they left one
}

// ReasonNotYetValid is the reason of a token whose turn has not started.
const ReasonNotYetValid = "not_yet_valid"

// ReasonOtherHolder is the reason of a valid token presented by a visitor
// other than the one it belongs to: a copy.
const ReasonOtherHolder = "other_holder"

// Limited is a Backend's refusal to enter a client over a per-client limit
// (the room's bot_protection): the client gets 429 with its code.
type Limited struct {
	Code, Message string
	RetryAfter    time.Duration
}

func (e *Limited) Error() string { return e.Code + ": " + e.Message }

// HeaderPow is where an API client sends a solved proof-of-work challenge
// (the payload waitroom's enter takes as "pow") for a new place.
const HeaderPow = "X-Waitroom-Pow"

// Challenged is a Backend's refusal to enter a client that has to prove
// work first (the room's proof of work is on): the client gets Status (403,
// or 400 for a payload that is not one) with waitroom's error and the
// challenge beside it, to solve and send back in HeaderPow.
type Challenged struct {
	Status               int
	Code, Message, Field string
	Challenge            json.RawMessage
}

func (e *Challenged) Error() string { return e.Code + ": " + e.Message }

// Backend is the waiting room as a gate uses it.
type Backend interface {
	// Verify checks an entry token for this gate's room, and that visitor
	// (the gate's visitor cookie) may use it: a token belongs to one
	// visitor, and a copy sent by anyone else is refused (ReasonOtherHolder).
	Verify(ctx context.Context, tok, visitor string) (Verdict, error)
	// Enter gives the visitor its live ticket, or a new one at the back,
	// as waitroom's enter shows it (queue.View, which the gate's answers
	// carry); pow is the client's solved challenge ("" for none), which a
	// new place needs while the room's proof of work is on (else *Challenged).
	Enter(ctx context.Context, visitor, pow string) (queue.View, error)
	// Complete frees the token's slot: the visitor is done with checkout.
	Complete(ctx context.Context, tok string) error
	// Redeem takes a hand-off code (the waiting page's redirect carries it,
	// CodeParam) once for its entry token, which is bound to visitor from
	// then on in place of whoever held it. "" when the code is refused
	// (spent, expired, not this room's, the turn over).
	Redeem(ctx context.Context, code, visitor string) (string, error)
}

// Config is a gate's behaviour.
type Config struct {
	Backend Backend
	// Protect names the guarded paths; empty guards every request.
	Protect *Patterns
	// Complete names guarded paths whose 2xx answer ends the visitor's
	// turn (the order is placed): the slot is freed for the next in line.
	Complete   *Patterns
	WaitingURL string // the room's waiting page, absolute
	Cookies    Cookies
	Now        func() time.Time
	Logger     *slog.Logger
}

// Gate holds visitors without a valid entry token back from checkout.
type Gate struct {
	cfg      Config
	lastWarn atomic.Int64 // unix ns of the last "cannot ask" warning
}

// New returns a gate; Now and Logger default to the real ones.
func New(cfg Config) *Gate {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Gate{cfg: cfg}
}

// Headers the gate sets on requests it lets through, after removing any a
// client sent, so checkout can trust them: the ticket (a stable key for
// the order) and the visitor or user.
const (
	HeaderTicket  = "Waitroom-Ticket"
	HeaderSubject = "Waitroom-Subject"
)

// Handler guards pass, which serves guarded requests that hold a valid
// token; through serves everything else (unguarded paths, CORS preflights,
// which carry no credentials).
func (g *Gate) Handler(pass, through http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case (r.Method == http.MethodGet || r.Method == http.MethodHead) && (r.URL.Query().Has(TokenParam) || r.URL.Query().Has(CodeParam)):
			g.land(w, r)
		case r.Method == http.MethodOptions || !g.guards(r.URL.Path):
			through.ServeHTTP(w, onward(r, Verdict{}))
		default:
			g.guard(w, r, pass)
		}
	})
}

func (g *Gate) guards(urlPath string) bool {
	return g.cfg.Protect.Empty() || g.cfg.Protect.Match(urlPath)
}

// land takes what the waiting page sent the browser back with, a hand-off
// code (redeemed here, server to server, for the token) or the token itself,
// keeps the token in a cookie and sends the browser where it first wanted
// to go, so neither lingers in the address bar, history or a Referer.
func (g *Gate) land(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if code := q.Get(CodeParam); plausibleCode(code) {
		// The token will be checked against this visitor: make sure it has one.
		vid := g.cfg.Cookies.ensureVisitor(w, r)
		tok, err := g.cfg.Backend.Redeem(r.Context(), code, vid)
		switch {
		case err != nil:
			g.cfg.Logger.Warn("gate: redeem a hand-off code", "err", err)
		case tok != "":
			g.cfg.Cookies.setToken(w, tok)
		}
		// A refused code (spent: the back button, a copied link) leaves the
		// visitor as it was: the guard sends it to the waiting page, which
		// hands its owner a fresh one.
	} else if tok := q.Get(TokenParam); plausibleToken(tok) {
		g.cfg.Cookies.setToken(w, tok)
		g.cfg.Cookies.ensureVisitor(w, r)
	}
	dest := g.cfg.Cookies.takeReturn(w, r)
	if dest == "" {
		dest = withoutToken(r.URL.RequestURI())
	}
	if !safeReturn(dest) {
		dest = "/"
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, dest, http.StatusFound)
}

type candidate struct {
	tok        string
	fromCookie bool
}

// candidates are the request's entry tokens: Bearer first (an API client
// says so explicitly), then the cookie. A Bearer that is the shop's own
// credential simply fails to verify and the cookie is tried.
func candidates(r *http.Request) []candidate {
	var out []candidate
	if b := bearer(r); plausibleToken(b) {
		out = append(out, candidate{tok: b})
	}
	if ck, err := r.Cookie(TokenCookie); err == nil && plausibleToken(ck.Value) {
		out = append(out, candidate{tok: ck.Value, fromCookie: true})
	}
	return out
}

func (g *Gate) guard(w http.ResponseWriter, r *http.Request, pass http.Handler) {
	ctx := r.Context()
	refused, stale, copied := "", false, false
	cands := candidates(r)
	vid := visitor(r)
	if len(cands) > 0 || !WantsHTML(r) {
		// A token is checked against its visitor, and an API client enters
		// under it: one id for both, even on a first, cookieless request.
		vid = g.cfg.Cookies.ensureVisitor(w, r)
	}
	for _, c := range cands {
		v, err := g.cfg.Backend.Verify(ctx, c.tok, vid)
		switch {
		case err != nil:
			g.unavailable(w, r, "verify", err)
			return
		case v.Valid:
			g.pass(w, r, pass, c.tok, v)
			return
		case v.Reason == ReasonNotYetValid:
			g.tooEarly(w, r, v.NotBefore, turnAhead(v))
			return
		}
		refused, stale = v.Reason, stale || c.fromCookie
		copied = copied || v.Reason == ReasonOtherHolder
	}
	if WantsHTML(r) {
		if stale {
			g.cfg.Cookies.clear(w, TokenCookie)
		}
		// Someone else's token, or the owner's after a copy was presented
		// first: the waiting page knows its owner by waitroom's own cookie
		// and hands them a fresh code, which takes the token back.
		// The waiting page enters the visitor itself, with waitroom's own
		// cookie: a redirect that is not followed costs the line nothing.
		g.toWaitingPageAfter(w, r, refused)
		return
	}
	if copied {
		// A copy of another visitor's token earns nothing, not even a place:
		// a client that wants one comes without it.
		if stale {
			g.cfg.Cookies.clear(w, TokenCookie)
		}
		writeRefusal(w, http.StatusForbidden, errorBody{Code: CodeOtherHolder, Message: "the entry token sent belongs to another visitor; " +
			"its owner takes it back from the waiting page; ask without it for a place of your own"}, g.cfg.WaitingURL)
		return
	}
	t, err := g.cfg.Backend.Enter(ctx, vid, r.Header.Get(HeaderPow))
	if stale && (err != nil || t.State != vocab.StateAdmitted) {
		g.cfg.Cookies.clear(w, TokenCookie) // an admitted ticket sets the new one
	}
	var lim *Limited
	var ch *Challenged
	if errors.As(err, &ch) {
		writeChallenge(w, ch, g.cfg.WaitingURL)
		return
	}
	if errors.As(err, &lim) {
		writeJSON(w, http.StatusTooManyRequests, max(lim.RetryAfter, time.Second), waitBody{
			Error: errorBody{Code: lim.Code, Message: lim.Message}, WaitingRoomURL: g.cfg.WaitingURL,
		})
		return
	}
	if err != nil {
		g.unavailable(w, r, "enter", err)
		return
	}
	// Every answer below carries the ticket as waitroom's API shows it.
	held := func(code, msg string) waitBody {
		return waitBody{Error: errorBody{Code: code, Message: msg}, WaitingRoomURL: g.cfg.WaitingURL, View: t}
	}
	switch t.State {
	case vocab.StateAdmitted:
		g.admitted(w, r, pass, t, vid)
	case vocab.StateWaiting:
		msg := "checkout is busy: you are in line; ask again after retry_after_ms"
		if refused != "" {
			msg = "the entry token sent was refused (" + refused + "); " + msg
		}
		writeJSON(w, http.StatusTooManyRequests, t.NextUpdate(), held(CodeInLine, msg))
	case vocab.StateClosed:
		writeJSON(w, http.StatusForbidden, 0, held(CodeClosed, "the sale has ended"))
	case vocab.StateSoldOut:
		writeJSON(w, http.StatusForbidden, 0, held(CodeSoldOut, "the sale is sold out"))
	case vocab.StateFull:
		writeJSON(w, http.StatusServiceUnavailable, max(t.NextUpdate(), time.Second),
			held(CodeLineFull, "the line is full: no place was taken; ask again after Retry-After"))
	default: // vocab.StateBypassed: the line is down, waitroom takes intents instead
		writeJSON(w, http.StatusServiceUnavailable, max(t.NextUpdate(), time.Second),
			held(CodeUnavailable, "the line is not running; submit an intent at accept_url or ask again later"))
	}
}

// admitted: an API client's turn came. It passes at once when the turn has
// started; either way it keeps the token as a cookie, and reads it in the
// answer for use as a Bearer.
func (g *Gate) admitted(w http.ResponseWriter, r *http.Request, pass http.Handler, t queue.View, vid string) {
	orderable, err := t.OrderableTime()
	if t.Token == nil || *t.Token == "" || err != nil {
		g.unavailable(w, r, "enter", errors.New("admitted ticket without a token or its turn"))
		return
	}
	tok := *t.Token
	g.cfg.Cookies.setToken(w, tok)
	v, err := g.cfg.Backend.Verify(r.Context(), tok, vid)
	switch {
	case err != nil:
		g.unavailable(w, r, "verify", err)
	case v.Valid:
		g.pass(w, r, pass, tok, v)
	case v.Reason == ReasonNotYetValid:
		if v.NotBefore.IsZero() {
			v.NotBefore = orderable
		}
		g.tooEarly(w, r, v.NotBefore, t)
	default:
		// Reclaimed between enter and verify: the ticket is gone, and the
		// next ask enters again.
		writeJSON(w, http.StatusTooManyRequests, time.Second, waitBody{
			Error:          errorBody{Code: CodeInLine, Message: "your turn ended (" + v.Reason + "); ask again to join the line"},
			WaitingRoomURL: g.cfg.WaitingURL,
			View:           queue.View{Room: t.Room, Ticket: t.Ticket, State: vocab.StateExpired, Display: vocab.DisplayExpired, Reason: v.Reason, QueueingMethod: t.QueueingMethod},
		})
	}
}

// pass lets a visitor with a valid token through. On a Complete path a 2xx
// answer frees the slot, after the answer is done, so checkout is never
// given a new visitor while it still works for this one.
func (g *Gate) pass(w http.ResponseWriter, r *http.Request, pass http.Handler, tok string, v Verdict) {
	r = onward(r, v)
	if !g.cfg.Complete.Match(r.URL.Path) {
		pass.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w, onHeader: func(code int) {
		if code/100 == 2 {
			g.cfg.Cookies.clear(w, TokenCookie)
		}
	}}
	pass.ServeHTTP(sw, r)
	if sw.code/100 != 2 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := g.cfg.Backend.Complete(ctx, tok); err != nil {
		// The slot frees itself when the token expires.
		g.cfg.Logger.Warn("gate: complete: slot not handed back", "ticket", v.Ticket, "err", err)
	}
}

// tooEarly: the token is good but its turn starts at notBefore. The jitter
// that spreads a batch over time only holds if nobody starts early.
func (g *Gate) tooEarly(w http.ResponseWriter, r *http.Request, notBefore time.Time, t queue.View) {
	if WantsHTML(r) {
		// The waiting page counts down to the turn and comes back.
		g.toWaitingPage(w, r)
		return
	}
	wait := max(notBefore.Sub(g.cfg.Now()), time.Millisecond)
	writeJSON(w, http.StatusTooEarly, wait, waitBody{
		Error:          errorBody{Code: CodeTooEarly, Message: "your turn starts at orderable_at; ask again after retry_after_ms"},
		WaitingRoomURL: g.cfg.WaitingURL, View: t,
	})
}

// turnAhead is the ticket of a token whose turn has not started, as far as
// the token tells: admitted, from its nbf on. The client holds the token.
func turnAhead(v Verdict) queue.View {
	at := v.NotBefore.UTC().Format(queue.ViewTime)
	return queue.View{Ticket: v.Ticket, State: vocab.StateAdmitted, Display: vocab.DisplayAdmitted, OrderableAt: &at}
}

func (g *Gate) toWaitingPage(w http.ResponseWriter, r *http.Request) {
	g.cfg.Cookies.remember(w, r)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, g.cfg.WaitingURL, http.StatusFound)
}

// unavailable: the waiting room cannot be asked. The gate fails closed;
// browsers go to the waiting page, which shows waitroom's degraded mode.
func (g *Gate) unavailable(w http.ResponseWriter, r *http.Request, action string, err error) {
	now := time.Now().UnixNano()
	if last := g.lastWarn.Load(); now-last > int64(time.Second) && g.lastWarn.CompareAndSwap(last, now) {
		g.cfg.Logger.Warn("gate: cannot ask the waiting room", "action", action, "err", err)
	}
	if WantsHTML(r) {
		g.toWaitingPage(w, r)
		return
	}
	writeJSON(w, http.StatusServiceUnavailable, time.Second, waitBody{
		Error:          errorBody{Code: CodeUnavailable, Message: "the waiting room cannot be reached; ask again shortly"},
		WaitingRoomURL: g.cfg.WaitingURL,
	})
}

// onward is the request as it goes on to checkout: the gate's own headers
// are replaced by what it verified, and its own cookies left behind.
func onward(r *http.Request, v Verdict) *http.Request {
	spoofed := spoofedHeaders(r.Header)
	if !v.Valid && len(spoofed) == 0 && !hasGateCookie(r) {
		return r
	}
	r = r.Clone(r.Context())
	for _, k := range spoofed {
		delete(r.Header, k)
	}
	stripCookies(r.Header)
	if v.Valid {
		r.Header.Set(HeaderTicket, v.Ticket)
		r.Header.Set(HeaderSubject, v.Subject)
	}
	return r
}

// spoofedHeaders are the keys of client-sent headers that read as the
// gate's own, in any case and with '_' for '-': CGI-style upstreams (PHP,
// some proxies) fold Waitroom_Ticket into the same variable.
func spoofedHeaders(h http.Header) []string {
	var out []string
	for k := range h {
		n := strings.ReplaceAll(k, "_", "-")
		if strings.EqualFold(n, HeaderTicket) || strings.EqualFold(n, HeaderSubject) {
			out = append(out, k)
		}
	}
	return out
}

func hasGateCookie(r *http.Request) bool {
	for _, name := range []string{VisitorCookie, ReturnCookie} {
		if _, err := r.Cookie(name); err == nil {
			return true
		}
	}
	return false
}
