package pow

import (
	"context"
	"errors"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// Gate makes a new place cost a solved challenge when the room asks for one
// (bot_protection.proof_of_work), at the price of the client's network
// (queue.PowPrice). Every way into the line uses it: waitroom's API and the
// gates that enter API clients themselves.
type Gate struct {
	Issuer *Issuer
}

// NewGate derives the challenges' secrets from the deployment's entry-token
// keys, so every server and gate checks what any other issued.
func NewGate(keys *token.Keyset, now func() time.Time) Gate {
	return Gate{Issuer: NewIssuer(keys.Derive("pow"), now)}
}

// Line is what the gate needs of the line to price and limit places;
// *queue.Line has it. The gate never enters: the handler does, with the
// proof Check gave it.
type Line interface {
	LimitClientPaid(ctx context.Context, room string, s *queue.Settings, bucket, identity string, paid int64) error
	PlacesHeld(ctx context.Context, room, bucket string) (int64, error)
}

// Client is who asks for a place: its identity, and its network's bucket
// (clientip.Bucket; "" when unknown: the price is then the room's base).
type Client struct {
	Identity, Bucket string
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

// Price is what a new place of client's network costs in room now. While
// the store cannot count (it is down), it is the room's base price: no
// place is given then anyway, only degraded mode's intents.
func (g Gate) Price(ctx context.Context, line Line, s queue.Settings, room, bucket string) (Price, error) {
	base := queue.PowPrice(s.BotProtection, 0)
	if bucket == "" {
		return Price{Difficulty: base, Base: base}, nil
	}
	held, err := line.PlacesHeld(ctx, room, bucket)
	if errors.Is(err, queue.ErrUnavailable) {
		return Price{Difficulty: base, Base: base}, nil
	}
	if err != nil {
		return Price{}, err
	}
	return Price{Difficulty: queue.PowPrice(s.BotProtection, held), Base: base, Held: held}, nil
}

// Challenge is a fresh challenge for client in room at its network's price.
func (g Gate) Challenge(ctx context.Context, line Line, s queue.Settings, room string, c Client) (Challenge, error) {
	p, err := g.Price(ctx, line, s, room, c.Bucket)
	if err != nil {
		return Challenge{}, err
	}
	return g.Issuer.Issue(room, c.Identity, p)
}

// Checked verifies payload alone, without the network's count: a solution
// for this room and visitor at no less than the room's base price. Degraded
// mode uses it while the store is down.
func (g Gate) Checked(s queue.Settings, room, identity, payload string) (queue.EntryProof, error) {
	proof, _, err := g.check(s, room, identity, payload)
	return proof, err
}

// check is Checked, with the price the solution paid.
func (g Gate) check(s queue.Settings, room, identity, payload string) (queue.EntryProof, int64, error) {
	if !s.BotProtection.PowOn() {
		return queue.EntryProof{}, 0, nil
	}
	if payload == "" {
		return queue.EntryProof{Required: true}, 0, nil
	}
	p, err := g.Issuer.Verify(payload, room, identity)
	if err == nil && p.Paid < queue.PowPrice(s.BotProtection, 0) {
		err = queue.ErrUnderpaid
	}
	if err != nil {
		return queue.EntryProof{}, 0, err
	}
	return queue.EntryProof{Required: true, ID: p.ID, Expires: p.Expires}, p.Paid, nil
}

// Proof checks payload for a new place of client in room and holds its
// network to the room's limits and price (queue.Line.LimitClientPaid); the
// proof names the network. With
// protection off a place costs nothing but the limits; with no payload, a
// place can only be one the identity already holds. A solution that does
// not hold, or paid less than the network's next place costs, is a
// *Refusal; a limit's refusal is a *queue.LimitError.
func (g Gate) Proof(ctx context.Context, line Line, s queue.Settings, room string, c Client, payload string) (queue.EntryProof, error) {
	proof, paid, err := g.check(s, room, c.Identity, payload)
	if err != nil {
		return queue.EntryProof{}, g.Refuse(ctx, line, s, room, c, err)
	}
	proof.Network = c.Bucket // the place's network: a scheduled opening draws by it
	if c.Bucket == "" {
		return proof, nil
	}
	if err := line.LimitClientPaid(ctx, room, &s, c.Bucket, c.Identity, paid); err != nil {
		if errors.Is(err, queue.ErrUnderpaid) {
			return queue.EntryProof{}, g.Refuse(ctx, line, s, room, c, err)
		}
		return queue.EntryProof{}, err
	}
	return proof, nil
}

// Check is the proof of work's verdict on an enter, reached before it: the
// proof the enter spends (queue.Line.EnterWith), and, when the solution was
// refused, the refusal a newcomer gets. A refused solution takes no new
// place, but an identity that holds one still gets it back: its enter goes
// ahead, asking for a proof that never came.
type Check struct {
	Proof   queue.EntryProof
	Refused *Refusal
}

// Check checks payload for a new place of client in room (s is the room's
// settings) at its network's price, before the handler enters. Its error
// is one that ends the enter (a limit's *queue.LimitError, the store's);
// a solution that does not hold is in the Check.
func (g Gate) Check(ctx context.Context, line Line, s queue.Settings, room string, c Client, payload string) (Check, error) {
	proof, err := g.Proof(ctx, line, s, room, c, payload)
	var refused *Refusal
	if errors.As(err, &refused) {
		return Check{Proof: queue.EntryProof{Required: true}, Refused: refused}, nil
	}
	if err != nil {
		return Check{}, err
	}
	return Check{Proof: proof}, nil
}

// Entered is the enter's error (EnterWith's, after Check) as the client
// reads it: a newcomer whose solution was refused gets that refusal, the
// line's refusals for want of work a *Refusal with a fresh challenge.
func (g Gate) Entered(ctx context.Context, line Line, s queue.Settings, room string, c Client, ch Check, err error) error {
	if ch.Refused != nil && errors.Is(err, queue.ErrProofRequired) {
		return ch.Refused
	}
	if err != nil {
		return g.EnterError(ctx, line, s, room, c, err)
	}
	return nil
}

// EnterError turns the line's refusals for want of work into *Refusal.
func (g Gate) EnterError(ctx context.Context, line Line, s queue.Settings, room string, c Client, err error) error {
	if errors.Is(err, queue.ErrProofRequired) || errors.Is(err, queue.ErrProofSpent) {
		return g.Refuse(ctx, line, s, room, c, err)
	}
	return err
}

// Refuse answers a place refused because of why (a Verify error,
// queue.ErrUnderpaid, queue.ErrProofRequired or queue.ErrProofSpent) with a
// fresh challenge at the network's price.
func (g Gate) Refuse(ctx context.Context, line Line, s queue.Settings, room string, c Client, why error) error {
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
	case errors.Is(why, queue.ErrUnderpaid):
		r.Code, r.Message = CodeUnderpaid, "pow: your network holds more places in this room than the challenge was priced for; solve the new one at its price"
	case errors.Is(why, queue.ErrProofSpent):
		r.Code, r.Message = "challenge_spent", "pow: this solution was already used; solve the new challenge"
	}
	ch, err := g.Challenge(ctx, line, s, room, c)
	if err != nil {
		return err
	}
	r.Challenge = ch
	return r
}

// CodeUnderpaid is the code of a solution priced below the network's next place.
const CodeUnderpaid = "challenge_underpaid"
