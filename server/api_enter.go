package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/queue"
)

// enterer is what the enter handler and the room page need of the line.
type enterer interface {
	roomReader
	cachedRooms
	ticketViewer
	pow.Line
	EnterWith(ctx context.Context, room, identity string, proof queue.EntryProof) (queue.Ticket, queue.Settings, error)
	Now() time.Time
	HeldIntent(room, identity string) (string, bool)
}

// handleEnter: POST /api/rooms/:room/enter {"user_token"?, "pow"?}
func handleEnter(line enterer, ids identities, deg degradeFlag, g powGate, waiters *queue.Waiters) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		var body struct {
			UserToken string `json:"user_token"`
			Pow       string `json:"pow"` // a solved challenge: see docs/api.md
		}
		if err := decodeBody(c, &body, true); err != nil {
			return err
		}
		v, err := enter(c, line, ids, deg, g, waiters, room, body.UserToken, body.Pow)
		if err != nil {
			return err
		}
		if v.RetryAfterS != nil { // a full line: the hint as a header too
			c.Response().Header().Set("Retry-After", strconv.FormatInt(*v.RetryAfterS, 10))
		}
		return c.JSON(http.StatusOK, v)
	}
}

// enter answers the enter API and the embed's: the visitor's place (their
// own, or a new one that costs a solution (powPayload) with proof of work
// on), or while degraded no place at all but the bypassed answer that points
// at the accept page.
func enter(c echo.Context, line enterer, ids identities, deg degradeFlag, g powGate, waiters *queue.Waiters, room, userToken, powPayload string) (queue.View, error) {
	if deg.Degraded() {
		return bypassed(line, room, "")
	}
	t, s, err := takePlace(c, line, ids, g, waiters, room, userToken, powPayload, true)
	if v, ok := orderedView(room, err); ok {
		return v, nil
	}
	if err != nil {
		return queue.View{}, err
	}
	return line.View(t, &s)
}

// takePlace is the one enter path of the API, the embed and the room page:
// the room, who is asking, the per-client limits, then the visitor's place.
// With challenge false, a visitor who would have to work for a new place
// gets queue.ErrProofRequired as it is, without a fresh challenge: the
// page's checking step asks for its own. A waiting
// ticket is kept by the line's waiters for its connection's first message.
func takePlace(c echo.Context, line enterer, ids identities, g powGate, waiters *queue.Waiters, room, userToken, powPayload string, challenge bool) (queue.Ticket, queue.Settings, error) {
	gen := waiters.Gen() // before: an admission heard meanwhile is not overtaken
	t, s, err := enterPlace(c, line, ids, g, room, userToken, powPayload, challenge)
	if err == nil {
		ids.markPlace(c, room, t.Identity)
	}
	if err == nil {
		waiters.Entered(room, t, gen)
	}
	return t, s, err
}

func enterPlace(c echo.Context, line enterer, ids identities, g powGate, room, userToken, powPayload string, challenge bool) (queue.Ticket, queue.Settings, error) {
	ctx := c.Request().Context()
	s, err := line.Settings(ctx, room)
	if err != nil {
		return queue.Ticket{}, queue.Settings{}, err
	}
	identity, err := ids.forEnter(c, s, userToken)
	if err != nil {
		return queue.Ticket{}, queue.Settings{}, err
	}
	if err := orderedOf(line, s, room, identity); err != nil {
		return queue.Ticket{}, s, err
	}
	if powPayload != "" && s.BotProtection.PowOn() {
		if err := g.take(c); err != nil { // checking a solution runs scrypt once
			return queue.Ticket{}, queue.Settings{}, err
		}
	}
	client := pow.Client{Identity: identity, Bucket: g.network(c)}
	var t queue.Ticket
	if challenge {
		// The proof of work is a check before the enter; its verdict then
		// words the enter's refusal.
		var ch pow.Check
		if ch, err = g.Check(ctx, line, s, room, client, powPayload); err == nil {
			var got queue.Settings
			t, got, err = line.EnterWith(ctx, room, identity, ch.Proof)
			refused := ch.Refused != nil && errors.Is(err, queue.ErrProofRequired)
			if err = g.Entered(ctx, line, s, room, client, ch, err); !refused {
				s = got // a refused newcomer keeps the settings it was refused under
			}
		}
	} else {
		var proof queue.EntryProof
		if proof, err = g.Proof(ctx, line, s, room, client, powPayload); err == nil {
			t, s, err = line.EnterWith(ctx, room, identity, proof)
		}
	}
	countWork(g, room, s, powPayload, err)
	return t, s, err
}

// countWork adds an enter's proof of work to the sale's history: a
// solution that bought a place, or a refusal that carried a fresh challenge.
func countWork(g powGate, room string, s queue.Settings, powPayload string, err error) {
	var r *pow.Refusal
	switch {
	case err == nil && powPayload != "" && s.BotProtection.PowOn():
		g.count(room, history.ChallengesSolved)
	case errors.As(err, &r):
		g.count(room, history.ChallengesIssued)
	}
}

func roomParam(c echo.Context) (string, error) {
	room := c.Param("room")
	if !queue.ValidRoomID(room) {
		return "", errRoomNotFound
	}
	return room, nil
}
