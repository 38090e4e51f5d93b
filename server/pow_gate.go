package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/pow"
)

// powLocalSpent bounds the ids one server remembers while Redis is down:
// each costs a solved challenge, and they are forgotten when it expires.
const powLocalSpent = 100_000

// powGate makes a new place cost a solved challenge when the room asks for
// one (bot_protection.proof_of_work). Challenges are stateless; single use is
// a mark in Redis (queue's enter script), or in this process while degraded.
type powGate struct {
	issuer *pow.Issuer
	local  *pow.SpentSet
	now    func() time.Time
}

// errNoChallenge: the pool of ready challenges is empty (someone asks for
// many); the page's script asks again after Retry-After.
var errNoChallenge = &apiError{Status: http.StatusServiceUnavailable, Code: "unavailable",
	Message: "pow: no challenge is ready; retry in a second", RetryAfter: time.Second}

func newPowGate(line *queue.Line, keys pow.Keys) powGate {
	return powGate{
		issuer: pow.NewIssuer(line.Keys().Derive("pow"), line.Now).From(keys),
		local:  pow.NewSpentSet(powLocalSpent),
		now:    line.Now,
	}
}

// proof checks payload for a new place of identity in room. With protection
// off a place costs nothing; with no payload, a place can only be one the
// identity already holds.
func (g powGate) proof(s queue.Settings, room, identity, payload string) (queue.EntryProof, error) {
	if !s.BotProtection.PowOn() {
		return queue.EntryProof{}, nil
	}
	if payload == "" {
		return queue.EntryProof{Required: true}, nil
	}
	p, err := g.issuer.Verify(payload, room, identity)
	if err != nil {
		return queue.EntryProof{}, g.refuse(s, room, identity, err)
	}
	return queue.EntryProof{Required: true, ID: p.ID, Expires: p.Expires}, nil
}

// spendLocal is single use while Redis is down: per server only.
func (g powGate) spendLocal(s queue.Settings, room, identity, payload string) error {
	p, err := g.proof(s, room, identity, payload)
	if err != nil || !p.Required {
		return err
	}
	if p.ID == "" {
		return g.refuse(s, room, identity, queue.ErrProofRequired)
	}
	ok, full := g.local.Spend(room+"/"+p.ID, p.Expires, g.now())
	if full {
		return errUnavailable
	}
	if !ok {
		return g.refuse(s, room, identity, queue.ErrProofSpent)
	}
	return nil
}

// refuse answers a place refused for want of work, with a fresh challenge
// beside the error so the client can solve it and try again at once.
func (g powGate) refuse(s queue.Settings, room, identity string, why error) error {
	status, code, msg := http.StatusForbidden, "challenge_required", "this room asks for a proof of work: solve the challenge and enter again with it"
	switch {
	case errors.Is(why, pow.ErrMalformed):
		status, code, msg = http.StatusBadRequest, "challenge_malformed", "pow: not a solution payload (base64 of {challenge, solution})"
	case errors.Is(why, pow.ErrForged):
		code, msg = "challenge_forged", "pow: the challenge was not issued by this waiting room"
	case errors.Is(why, pow.ErrExpired):
		code, msg = "challenge_expired", "pow: the challenge has expired; solve the new one"
	case errors.Is(why, pow.ErrWrongRoom):
		code, msg = "challenge_wrong_room", "pow: the challenge is for another room"
	case errors.Is(why, pow.ErrWrongVisitor):
		code, msg = "challenge_wrong_visitor", "pow: the challenge was issued to another visitor"
	case errors.Is(why, pow.ErrWrongSolution):
		code, msg = "challenge_wrong_solution", "pow: the solution does not solve the challenge"
	case errors.Is(why, queue.ErrProofSpent):
		code, msg = "challenge_spent", "pow: this solution was already used; solve the new challenge"
	}
	ae := &apiError{Status: status, Code: code, Message: msg}
	if code != "challenge_required" {
		ae.Field = "pow"
	}
	ch, err := g.issue(s, room, identity)
	if err != nil {
		return err
	}
	ae.challenge = &ch
	return ae
}

// issue is a challenge from the pool, or errNoChallenge when it is empty:
// never scrypt in the request.
func (g powGate) issue(s queue.Settings, room, identity string) (pow.Challenge, error) {
	ch, err := g.issuer.Issue(room, identity, s.BotProtection.PowCost)
	if errors.Is(err, pow.ErrNoChallenge) {
		return ch, errNoChallenge
	}
	return ch, err
}

// enterError turns the line's refusals for want of work into answers.
func (g powGate) enterError(s queue.Settings, room, identity string, err error) error {
	if errors.Is(err, queue.ErrProofRequired) || errors.Is(err, queue.ErrProofSpent) {
		return g.refuse(s, room, identity, err)
	}
	return err
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
		ch, err := g.issue(s, room, identity)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, ch)
	}
}
