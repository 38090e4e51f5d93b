package queue

import (
	"context"
	"errors"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
)

// A place and its entry token belong to one person. A token is held by its
// owner (the identity that entered), or, where the gate cannot see the
// owner's identity, by whoever redeemed the owner's hand-off code, or (a
// shop's own server, HoldFirst) the first holder that presents it: a copy
// of the token then reaches no checkout, and the owner's next hand-off takes
// it back.

// HoldMode is who besides the owner may hold a token.
type HoldMode string

// Hold modes.
const (
	// HoldOwner: a cookie visitor's token is held by that visitor only (the
	// gate in front of checkout sees waitroom's own cookie); any other (a
	// user's, an embed visitor's) by the holder its owner's hand-off code
	// bound it to (Redeem): presenting a copy first binds nothing.
	HoldOwner HoldMode = "owner"
	// HoldFirst: the first holder that presents the token (a shop's own
	// server sees its own visitors, never waitroom's cookie).
	HoldFirst HoldMode = "first"
)

// ReasonOtherHolder is the verdict on a valid token presented by someone
// other than the one who holds it.
const ReasonOtherHolder = "other_holder"

// Hold verifies tok like Verify, then that holder may use it (see HoldOwner
// and HoldFirst); a valid token of someone else comes back with
// ReasonOtherHolder.
func (l *Line) Hold(ctx context.Context, tok, room, holder string, mode HoldMode) (Verdict, error) {
	v, err := l.Verify(ctx, tok, room)
	if err != nil || !v.Valid {
		return v, err
	}
	if holder == "" {
		return Verdict{Claims: v.Claims, Reason: ReasonOtherHolder}, nil
	}
	ok, err := l.store.Hold(ctx, v.Claims.Room, v.Claims.TicketID, holder, mode, v.Claims.ExpiresAt.Sub(l.clock.Now()))
	if err != nil {
		return Verdict{}, err
	}
	if !ok {
		return Verdict{Claims: v.Claims, Reason: ReasonOtherHolder}, nil
	}
	return v, nil
}

// Reasons of a hand-off code that Redeem refuses.
const (
	ReasonCodeInvalid = "code_invalid" // not ours, another room's, or expired
	ReasonCodeSpent   = "code_spent"   // redeemed before
)

// Redeem takes a hand-off code of room (redirect_url's wr_code: only the
// ticket's owner is shown one) once, for the ticket's entry token. With a
// holder, the token is bound to holder from now on in place of whoever held
// it: a copy presented first loses its hold when the owner comes back
// through the waiting page. A refusal is a Verdict with a Reason.
func (l *Line) Redeem(ctx context.Context, room, code, holder string) (string, Verdict, error) {
	now := l.clock.Now()
	h, err := l.keys.ParseHandoff(code, room, now)
	if errors.Is(err, token.ErrHandoff) {
		return "", Verdict{Reason: ReasonCodeInvalid}, nil
	}
	if err != nil {
		return "", Verdict{}, err
	}
	ts, _, err := l.StatusMany(ctx, room, []string{h.Ticket})
	if err != nil {
		return "", Verdict{}, err
	}
	if len(ts) != 1 || ts[0].State != vocab.StateAdmitted {
		reason := "expired"
		if len(ts) == 1 && ts[0].Reason != "" {
			reason = ts[0].Reason
		}
		return "", Verdict{Reason: reason}, nil
	}
	tok, err := l.Token(ts[0])
	if err != nil {
		return "", Verdict{}, err
	}
	v, err := l.Verify(ctx, tok, room)
	if err != nil || !v.Valid {
		return "", v, err
	}
	first, err := l.store.Handoff(ctx, room, h.Ticket, h.Nonce, holder, h.Expires.Sub(now)+token.HandoffTTL, v.Claims.ExpiresAt.Sub(now))
	if err != nil {
		return "", Verdict{}, err
	}
	if !first {
		return "", Verdict{Claims: v.Claims, Reason: ReasonCodeSpent}, nil
	}
	return tok, v, nil
}
