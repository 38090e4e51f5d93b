package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

// Line is what the proxy needs of waitroom's in-process line; *queue.Line
// has it. Verifying in process also refuses completed and reclaimed tokens.
type Line interface {
	EnterWith(ctx context.Context, room, identity string, proof queue.EntryProof) (queue.Ticket, queue.Settings, error)
	Verify(ctx context.Context, tok, room string) (queue.Verdict, error)
	Complete(ctx context.Context, tok, room string) (queue.Verdict, error)
	Hold(ctx context.Context, tok, room, holder string, mode queue.HoldMode) (queue.Verdict, error)
	Redeem(ctx context.Context, room, code, holder string) (string, queue.Verdict, error)
	Settings(ctx context.Context, room string) (queue.Settings, error)
	LimitClientPaid(ctx context.Context, room string, s *queue.Settings, bucket, identity string, paid int64) error
	PlacesHeld(ctx context.Context, room, bucket string) (int64, error)
	View(t queue.Ticket, s *queue.Settings) (queue.View, error)
	Keys() *token.Keyset
	Now() time.Time
}

var _ Line = (*queue.Line)(nil)

// lineBackend is the line as the gate's backend for one room. It enters API
// clients itself, so it asks them for the room's proof of work as
// waitroom's enter does.
type lineBackend struct {
	line  Line
	room  string
	work  pow.Gate
	limit Challenges // nil: no limit
}

func newLineBackend(line Line, room string, limit Challenges) lineBackend {
	return lineBackend{line: line, room: room, work: pow.NewGate(line.Keys(), line.Now), limit: limit}
}

// Verify checks the token, then that visitor holds it. The gate runs on
// waitroom's origin and sees waitroom's own visitor cookie: a visitor's
// token passes only with that visitor's cookie (its sub is the cookie's
// hash), and a user's token only for the first visitor that presents it.
func (b lineBackend) Verify(ctx context.Context, tok, visitor string) (gatekit.Verdict, error) {
	v, err := b.line.Verify(ctx, tok, b.room)
	if err != nil {
		if !errors.Is(err, queue.ErrUnavailable) {
			return gatekit.Verdict{}, fmt.Errorf("gate: verify: %w", err)
		}
		// Redis is down, so whether the slot is still held cannot be
		// known: judge the token offline, as a checkout verifying through
		// the JWKS would. Completed tokens may pass until Redis is back;
		// no new ones are issued meanwhile.
		out := b.offline(tok)
		if out.Valid && !ownSubject(out.Subject, visitor) {
			// Who first held a user's token is in Redis: fail closed.
			return gatekit.Verdict{}, fmt.Errorf("gate: verify: holder: %w", err)
		}
		return out, nil
	}
	out := gatekit.Verdict{Valid: v.Valid, Reason: v.Reason, Ticket: v.Claims.TicketID,
		Subject: v.Claims.Subject, NotBefore: v.Claims.NotBefore, ExpiresAt: v.Claims.ExpiresAt}
	if v.Reason == gatekit.ReasonNotYetValid {
		// The line checked the signature before the times, but returns no
		// claims with this refusal: read when the turn starts.
		c, err := gatekit.Peek(tok)
		if err != nil {
			return gatekit.Verdict{Reason: "malformed"}, nil
		}
		out.Ticket, out.Subject, out.NotBefore = c.ID, c.Subject, c.NotBefore()
	}
	if !out.Valid || ownSubject(out.Subject, visitor) {
		return out, nil
	}
	if visitor == "" {
		return gatekit.Verdict{Reason: gatekit.ReasonOtherHolder, Ticket: out.Ticket}, nil
	}
	h, err := b.line.Hold(ctx, tok, b.room, queue.VisitorIdentity(visitor), queue.HoldOwner)
	if err != nil {
		return gatekit.Verdict{}, fmt.Errorf("gate: verify: %w", err)
	}
	if !h.Valid {
		return gatekit.Verdict{Reason: h.Reason, Ticket: out.Ticket}, nil
	}
	return out, nil
}

// ownSubject reports whether sub is the token subject of the visitor cookie.
func ownSubject(sub, visitor string) bool {
	return visitor != "" && sub == token.VisitorSubject(visitor)
}

func (b lineBackend) offline(tok string) gatekit.Verdict {
	c, err := b.line.Keys().Verify(tok, b.line.Now())
	switch {
	case err != nil:
		v := gatekit.Verdict{Reason: token.Reason(err)}
		if v.Reason == gatekit.ReasonNotYetValid {
			if p, perr := gatekit.Peek(tok); perr == nil {
				v.Ticket, v.NotBefore = p.ID, p.NotBefore()
			}
		}
		return v
	case c.Room != b.room:
		return gatekit.Verdict{Reason: "wrong_room"}
	}
	return gatekit.Verdict{Valid: true, Ticket: c.TicketID, Subject: c.Subject, NotBefore: c.NotBefore, ExpiresAt: c.ExpiresAt}
}

// Enter answers with the ticket as waitroom's enter does (queue.View).
func (b lineBackend) Enter(ctx context.Context, visitor, payload string) (queue.View, error) {
	identity := queue.VisitorIdentity(visitor)
	s, err := b.line.Settings(ctx, b.room)
	if err != nil {
		return queue.View{}, fmt.Errorf("gate: enter: %w", err)
	}
	bucket, _ := ctx.Value(clientKey{}).(string)
	if payload != "" && s.BotProtection.PowOn() && b.limit != nil && bucket != "" {
		// Checking a solution runs scrypt once: counted as waitroom's enter counts it.
		if wait, ok := b.limit.Take(ctx, bucket); !ok {
			return queue.View{}, &gatekit.Limited{Code: queue.CodeRateLimited, RetryAfter: max(wait, time.Second),
				Message: "too many proof-of-work challenges and solutions from this network; retry after a while"}
		}
	}
	// The proof of work is a check before the enter; its verdict then words
	// the enter's refusal.
	client := pow.Client{Identity: identity, Bucket: bucket}
	ch, err := b.work.Check(ctx, b.line, s, b.room, client, payload)
	var t queue.Ticket
	if err == nil {
		var got queue.Settings
		t, got, err = b.line.EnterWith(ctx, b.room, identity, ch.Proof)
		if err = b.work.Entered(ctx, b.line, s, b.room, client, ch, err); err == nil {
			s = got
		}
	}
	var refused *pow.Refusal
	if errors.As(err, &refused) {
		return queue.View{}, challenged(refused)
	}
	if lerr := limited(err); lerr != err {
		return queue.View{}, lerr
	}
	if err != nil {
		return queue.View{}, fmt.Errorf("gate: enter: %w", err)
	}
	v, err := b.line.View(t, &s)
	if err != nil {
		return queue.View{}, fmt.Errorf("gate: enter: %w", err)
	}
	return v, nil
}

// challenged is a refusal for want of work as the gate answers it: the same
// status, code and challenge as waitroom's enter.
func challenged(r *pow.Refusal) error {
	ch, err := json.Marshal(r.Challenge)
	if err != nil {
		return fmt.Errorf("gate: enter: %w", err)
	}
	out := &gatekit.Challenged{Status: http.StatusForbidden, Code: r.Code, Message: r.Message, Challenge: ch}
	if r.Malformed {
		out.Status = http.StatusBadRequest
	}
	if r.Code != pow.CodeRequired {
		out.Field = "pow"
	}
	return out
}

// Redeem takes a hand-off code for its token, bound to visitor from now on:
// a user's token (held by its first holder) comes back to its owner this way.
func (b lineBackend) Redeem(ctx context.Context, code, visitor string) (string, error) {
	tok, _, err := b.line.Redeem(ctx, b.room, code, queue.VisitorIdentity(visitor))
	if err != nil {
		return "", fmt.Errorf("gate: redeem: %w", err)
	}
	return tok, nil
}

func (b lineBackend) Complete(ctx context.Context, tok string) error {
	v, err := b.line.Complete(ctx, tok, b.room)
	if err != nil {
		return fmt.Errorf("gate: complete: %w", err)
	}
	if !v.Valid {
		return fmt.Errorf("gate: complete: token not active: %s", v.Reason)
	}
	return nil
}
