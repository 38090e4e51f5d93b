package queue

import (
	"context"
)

// A place and its entry token belong to one person. A token is held by its
// owner (the identity that entered), or, where the gate cannot see the
// owner's identity, by the first holder that presents it: a copy of the
// token then reaches no checkout.

// HoldMode is who besides the owner may hold a token.
type HoldMode string

// Hold modes.
const (
	// HoldOwner: a cookie visitor's token is held by that visitor only (the
	// gate in front of checkout sees waitroom's own cookie); a user's token
	// by the first holder.
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
