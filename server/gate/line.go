package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/token"
	"github.com/waitroom/waitroom/server/gate/internal/gatekit"
)

// Line is what the proxy needs of waitroom's in-process line; *queue.Line
// has it. Verifying in process also refuses completed and reclaimed tokens.
type Line interface {
	Enter(ctx context.Context, room, identity string) (queue.Ticket, queue.Settings, error)
	Verify(ctx context.Context, tok, room string) (queue.Verdict, error)
	Complete(ctx context.Context, tok, room string) (queue.Verdict, error)
	Token(t queue.Ticket) (string, error)
	Keys() *token.Keyset
	Now() time.Time
}

var _ Line = (*queue.Line)(nil)

// lineBackend is the line as the gate's backend for one room.
type lineBackend struct {
	line Line
	room string
}

func (b lineBackend) Verify(ctx context.Context, tok string) (gatekit.Verdict, error) {
	v, err := b.line.Verify(ctx, tok, b.room)
	if err != nil {
		if !queue.Unreachable(err) {
			return gatekit.Verdict{}, fmt.Errorf("gate: verify: %w", err)
		}
		// Redis is down, so whether the slot is still held cannot be
		// known: judge the token offline, as a checkout verifying through
		// the JWKS would. Completed tokens may pass until Redis is back;
		// no new ones are issued meanwhile.
		return b.offline(tok), nil
	}
	out := gatekit.Verdict{Valid: v.Valid, Reason: v.Reason, Ticket: v.Claims.TicketID,
		Subject: v.Claims.Subject, NotBefore: v.Claims.NotBefore}
	if v.Reason == gatekit.ReasonNotYetValid {
		// The line checked the signature before the times, but returns no
		// claims with this refusal: read when the turn starts.
		c, err := gatekit.Peek(tok)
		if err != nil {
			return gatekit.Verdict{Reason: "malformed"}, nil
		}
		out.Ticket, out.Subject, out.NotBefore = c.ID, c.Subject, c.NotBefore()
	}
	return out, nil
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
	return gatekit.Verdict{Valid: true, Ticket: c.TicketID, Subject: c.Subject, NotBefore: c.NotBefore}
}

func (b lineBackend) Enter(ctx context.Context, visitor string) (gatekit.Ticket, error) {
	t, s, err := b.line.Enter(ctx, b.room, queue.VisitorIdentity(visitor))
	if err != nil {
		return gatekit.Ticket{}, fmt.Errorf("gate: enter: %w", err)
	}
	out := gatekit.Ticket{ID: t.ID, State: t.State, Position: t.Position, Waiting: t.Waiting,
		NextUpdate: s.TierInterval(1)}
	switch t.State {
	case queue.StateWaiting:
		out.ETA, out.NextUpdate = queue.ETA(t, &s), s.TierInterval(t.Position)
	case queue.StateAdmitted:
		if out.Token, err = b.line.Token(t); err != nil {
			return gatekit.Ticket{}, fmt.Errorf("gate: enter: %w", err)
		}
		out.OrderableAt = t.OrderableAt
	}
	return out, nil
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
