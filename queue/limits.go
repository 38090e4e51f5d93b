package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Per-client limits of a room (Settings.BotProtection), counted in Redis
// across every server. A client is a bucket of addresses (the caller's
// choice: one IPv4 address, one IPv6 /64). Only new places count: a visitor
// who asks again for the place it holds is never limited.

// Names of the limits, as the settings spell them.
const (
	LimitEntersPerMinute = "enters_per_ip_per_minute"
	LimitPlaces          = "places_per_ip"
)

// LimitError is a refusal by a per-client limit.
type LimitError struct {
	Limit      string // LimitEntersPerMinute or LimitPlaces
	Max        int64
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("queue: over the limit %s of %d", e.Limit, e.Max)
}

// Codes of the refusals, as clients read them.
const (
	CodeRateLimited   = "rate_limited"
	CodeTooManyPlaces = "too_many_places"
)

// Code is the refusal's error code: CodeRateLimited or CodeTooManyPlaces.
func (e *LimitError) Code() string {
	if e.Limit == LimitPlaces {
		return CodeTooManyPlaces
	}
	return CodeRateLimited
}

// Explain says, for the client, which limit refused it.
func (e *LimitError) Explain() string {
	if e.Limit == LimitPlaces {
		return fmt.Sprintf("this network already holds %d places in this room (places_per_ip); try again when one ends", e.Max)
	}
	return fmt.Sprintf("too many new places from this network: at most %d a minute (enters_per_ip_per_minute)", e.Max)
}

// ErrLimited matches every *LimitError with errors.Is.
var ErrLimited = errors.New("queue: over a per-client limit")

func (e *LimitError) Is(target error) bool { return target == ErrLimited }

const (
	// PlaceClaimWindow is how long a claim counts before its place exists:
	// longer than any enter takes.
	PlaceClaimWindow = 10 * time.Second
	// PlacesTTL: a bucket's set goes a day after its last new place, so
	// buckets that stopped coming leave nothing behind.
	PlacesTTL = 24 * time.Hour
	// PlacesSweep is how many members PlacesHeld rechecks per call.
	PlacesSweep = 8
)

// Claims of a place by a client bucket.
const (
	ClaimHeld  = 0  // the identity holds a live place: nothing counted
	ClaimTaken = 1  // a new place is claimed for the identity
	ClaimFull  = -1 // the bucket holds its limit of places
)

// LimitClient holds a client bucket to the room's per-client limits before
// identity enters: nil when it may take (or already holds) a place, a
// *LimitError when a limit refuses it. With both limits off it costs nothing.
func (l *Line) LimitClient(ctx context.Context, room string, s *Settings, bucket, identity string) error {
	return l.LimitClientPaid(ctx, room, s, bucket, identity, 0)
}

// LimitClientPaid is LimitClient for a client that solved a proof of work of
// paid runs (0: none). With proof of work on, a paid place is always
// counted for the bucket, and refused with ErrUnderpaid when the bucket
// holds more places than paid buys (PowPlaces): the price rose since the
// challenge was issued.
func (l *Line) LimitClientPaid(ctx context.Context, room string, s *Settings, bucket, identity string, paid int64) error {
	bp := s.BotProtection
	priced := paid > 0 && bp.PowOn()
	if !priced && bp.EntersPerIPPerMinute <= 0 && bp.PlacesPerIP <= 0 {
		return nil
	}
	limit, byPrice := bp.PlacesPerIP, false
	if priced {
		if n := PowPlaces(bp, paid); limit <= 0 || n < limit {
			limit, byPrice = n, true
		}
		if limit == 0 {
			return ErrUnderpaid
		}
	}
	claim, err := l.store.ClaimPlace(ctx, room, bucket, identity, limit, l.clock.Now())
	switch {
	case err != nil:
		return err
	case claim == ClaimHeld:
		return nil
	case claim == ClaimFull && byPrice:
		return ErrUnderpaid
	case claim == ClaimFull:
		// Nobody knows when a place ends; a waiter who stops asking loses
		// it after abandon_after_s, the soonest one can free itself.
		return &LimitError{Limit: LimitPlaces, Max: bp.PlacesPerIP, RetryAfter: time.Duration(s.AbandonAfterS) * time.Second}
	}
	if bp.EntersPerIPPerMinute <= 0 {
		return nil
	}
	ok, retry, err := l.store.AllowEnter(ctx, room, bucket, bp.EntersPerIPPerMinute)
	if err == nil && ok {
		return nil
	}
	if limit > 0 {
		if rerr := l.store.ReleasePlace(ctx, room, bucket, identity); rerr != nil {
			l.log.Debug("queue: release a refused claim", "room", room, "err", rerr) // it lapses by itself
		}
	}
	if err != nil {
		return err
	}
	return &LimitError{Limit: LimitEntersPerMinute, Max: bp.EntersPerIPPerMinute, RetryAfter: retry}
}
