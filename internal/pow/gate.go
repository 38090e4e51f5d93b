package pow

import (
	"context"
	"errors"
	"time"

	"github.com/waitroom/waitroom/internal/token"
	"github.com/waitroom/waitroom/queue"
)

// Gate makes a new place cost a solved challenge when the room asks for one
// (bot_protection.proof_of_work). Every way into the line uses it: waitroom's
// API and the gates that enter API clients themselves.
type Gate struct {
	Issuer *Issuer
}

// NewGate derives the challenges' secrets from the deployment's entry-token
// keys, so every server and gate checks what any other issued. Challenges'
// keys come from from (the server's pool); nil derives each in the call.
func NewGate(keys *token.Keyset, now func() time.Time, from Keys) Gate {
	is := NewIssuer(keys.Derive("pow"), now)
	if from != nil {
		is.From(from)
	}
	return Gate{Issuer: is}
}

// Refusal is a place refused for want of work, as a client reads it: a code,
// a message and a fresh challenge, so it can solve and ask again at once.
type Refusal struct {
	Code, Message string
	// Malformed: the payload is not a solution at all (a bad request),
	// rather than a solution that does not hold.
	Malformed bool
	Challenge Challenge
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// CodeRequired is the code of a new place asked for without a solution.
const CodeRequired = "challenge_required"

// Proof checks payload for a new place of identity in room. With protection
// off a place costs nothing; with no payload, a place can only be one the
// identity already holds. A bad payload is a *Refusal.
func (g Gate) Proof(s queue.Settings, room, identity, payload string) (queue.EntryProof, error) {
	if !s.BotProtection.PowOn() {
		return queue.EntryProof{}, nil
	}
	if payload == "" {
		return queue.EntryProof{Required: true}, nil
	}
	p, err := g.Issuer.Verify(payload, room, identity)
	if err != nil {
		return queue.EntryProof{}, g.Refuse(s, room, identity, err)
	}
	return queue.EntryProof{Required: true, ID: p.ID, Expires: p.Expires}, nil
}

// Enterer is the line as Enter uses it; *queue.Line has it.
type Enterer interface {
	EnterWith(ctx context.Context, room, identity string, proof queue.EntryProof) (queue.Ticket, queue.Settings, error)
}

// Enter takes identity's place in room (s is the room's settings), a new one
// costing the work payload solves. A bad solution takes no new place, but an
// identity that holds one still gets it back; anyone else gets a *Refusal.
func (g Gate) Enter(ctx context.Context, line Enterer, s queue.Settings, room, identity, payload string) (queue.Ticket, queue.Settings, error) {
	proof, refused := g.Proof(s, room, identity, payload)
	if refused != nil {
		proof = queue.EntryProof{Required: true}
	}
	t, got, err := line.EnterWith(ctx, room, identity, proof)
	if refused != nil && errors.Is(err, queue.ErrProofRequired) {
		return queue.Ticket{}, s, refused
	}
	if err != nil {
		return queue.Ticket{}, got, g.EnterError(s, room, identity, err)
	}
	return t, got, nil
}

// EnterError turns the line's refusals for want of work into *Refusal.
func (g Gate) EnterError(s queue.Settings, room, identity string, err error) error {
	if errors.Is(err, queue.ErrProofRequired) || errors.Is(err, queue.ErrProofSpent) {
		return g.Refuse(s, room, identity, err)
	}
	return err
}

// Refuse answers a place refused because of why (a Verify error,
// queue.ErrProofRequired or queue.ErrProofSpent) with a fresh challenge.
func (g Gate) Refuse(s queue.Settings, room, identity string, why error) error {
	r := &Refusal{Code: CodeRequired, Message: "this room asks for a proof of work: solve the challenge and enter again with it"}
	switch {
	case errors.Is(why, ErrMalformed):
		r.Code, r.Message, r.Malformed = "challenge_malformed", "pow: not a solution payload (base64 of {challenge, solution})", true
	case errors.Is(why, ErrForged):
		r.Code, r.Message = "challenge_forged", "pow: the challenge was not issued by this waiting room"
	case errors.Is(why, ErrExpired):
		r.Code, r.Message = "challenge_expired", "pow: the challenge has expired; solve the new one"
	case errors.Is(why, ErrWrongRoom):
		r.Code, r.Message = "challenge_wrong_room", "pow: the challenge is for another room"
	case errors.Is(why, ErrWrongVisitor):
		r.Code, r.Message = "challenge_wrong_visitor", "pow: the challenge was issued to another visitor"
	case errors.Is(why, ErrWrongSolution):
		r.Code, r.Message = "challenge_wrong_solution", "pow: the solution does not solve the challenge"
	case errors.Is(why, queue.ErrProofSpent):
		r.Code, r.Message = "challenge_spent", "pow: this solution was already used; solve the new challenge"
	}
	ch, err := g.Issuer.Issue(room, identity, s.BotProtection.PowCost)
	if err != nil {
		return err
	}
	r.Challenge = ch
	return r
}
