package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/internal/pow"
	"github.com/waitroom/waitroom/queue"
)

// powLocalSpent bounds the ids one server remembers while Redis is down:
// each costs a solved challenge, and they are forgotten when it expires.
const powLocalSpent = 100_000

// powGate makes a new place cost a solved challenge when the room asks for
// one (bot_protection.proof_of_work): pow.Gate, shared with the gates, plus
// what only waitroom does. Challenges are stateless; single use is a mark in
// Redis (queue's enter script), or in this process while degraded.
type powGate struct {
	pow.Gate
	local *pow.SpentSet
	now   func() time.Time
}

// errNoChallenge: the pool of ready challenges is empty (someone asks for
// many); the page's script asks again after Retry-After.
var errNoChallenge = &apiError{Status: http.StatusServiceUnavailable, Code: "unavailable",
	Message: "pow: no challenge is ready; retry in a second", RetryAfter: time.Second}

func newPowGate(line *queue.Line, keys pow.Keys) powGate {
	return powGate{
		Gate:  pow.NewGate(line.Keys(), line.Now, keys),
		local: pow.NewSpentSet(powLocalSpent),
		now:   line.Now,
	}
}

// spendLocal is single use while Redis is down: per server only.
func (g powGate) spendLocal(s queue.Settings, room, identity, payload string) error {
	p, err := g.Proof(s, room, identity, payload)
	if err != nil || !p.Required {
		return err
	}
	if p.ID == "" {
		return g.Refuse(s, room, identity, queue.ErrProofRequired)
	}
	ok, full := g.local.Spend(room+"/"+p.ID, p.Expires, g.now())
	if full {
		return errUnavailable
	}
	if !ok {
		return g.Refuse(s, room, identity, queue.ErrProofSpent)
	}
	return nil
}

// powError is a refusal for want of work as an answer, with the fresh
// challenge beside the error.
func powError(r *pow.Refusal) *apiError {
	ae := &apiError{Status: http.StatusForbidden, Code: r.Code, Message: r.Message, challenge: &r.Challenge}
	if r.Malformed {
		ae.Status = http.StatusBadRequest
	}
	if r.Code != pow.CodeRequired {
		ae.Field = "pow"
	}
	return ae
}

// challengeRooms is what the challenge handler needs: the room, from the
// cache first, so challenges are served while Redis is down.
type challengeRooms interface {
	roomReader
	cachedRooms
}

// handleChallenge: GET /api/rooms/:room/challenge (and …/embed/challenge):
// a fresh challenge for this visitor, whom it names (setting the visitor
// cookie or embed key as enter does), so clients can solve before entering.
func handleChallenge(line challengeRooms, ids identities, g powGate) echo.HandlerFunc {
	return func(c echo.Context) error {
		room, err := roomParam(c)
		if err != nil {
			return err
		}
		s, ok := line.CachedRoom(room)
		if !ok {
			if s, err = line.Room(c.Request().Context(), room); err != nil {
				return err
			}
		}
		identity, err := ids.forEnter(c, s, "") // a user token comes as Bearer
		if err != nil {
			return err
		}
		ch, err := g.Issuer.Issue(room, identity, s.BotProtection.PowCost)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, ch)
	}
}
