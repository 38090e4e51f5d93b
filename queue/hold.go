package queue

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A place and its entry token belong to one person. A token is held by its
// owner (the identity that entered), or, where the gate cannot see the
// owner's identity, by the first holder that presents it: a copy of the
// token then reaches no checkout.

// Hold modes: who besides the owner may hold a token.
const (
	// HoldOwner: a cookie visitor's token is held by that visitor only (the
	// gate in front of checkout sees waitroom's own cookie); a user's token
	// by the first holder.
	HoldOwner = "owner"
	// HoldFirst: the first holder that presents the token (a shop's own
	// server sees its own visitors, never waitroom's cookie).
	HoldFirst = "first"
)

// ReasonOtherHolder is the verdict on a valid token presented by someone
// other than the one who holds it.
const ReasonOtherHolder = "other_holder"

var (
	//go:embed lua/hold.lua
	holdLua    string
	holdScript = redis.NewScript(holdLua)
)

func holderKey(prefix, room, ticket string) string {
	return prefix + "{" + room + "}:holder:" + ticket
}

// Hold reports whether holder may use the token of ticket, binding it to
// holder when nobody holds it yet; the binding lasts ttl, the token's life.
func (s *RedisStore) Hold(ctx context.Context, room, ticket, holder, mode string, ttl time.Duration) (bool, error) {
	k := keysFor(s.prefix, room)
	n, err := holdScript.Run(ctx, s.rdb, []string{k.tickets, holderKey(s.prefix, room, ticket)},
		ticket, holder, max(ttl.Milliseconds(), 1), mode).Int()
	if err != nil {
		return false, fmt.Errorf("queue: hold: %w", err)
	}
	return n == 1, nil
}

// Hold verifies tok like Verify, then that holder may use it (see HoldOwner
// and HoldFirst); a valid token of someone else comes back with
// ReasonOtherHolder.
func (l *Line) Hold(ctx context.Context, tok, room, holder, mode string) (Verdict, error) {
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
