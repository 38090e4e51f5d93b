package queue

import (
	"context"
	"errors"
)

// The price of a place with proof of work on rises with the live places
// (waiting, pre-queue or admitted, and no-shows until their session would
// have ended) that the client's network already holds in the room. The
// k-th place of a network (k from 0) costs, in expected scrypt runs:
//
//	pow_cost                                          k < PowFreePlaces (4)
//	pow_cost × (1 + (k − 3) / PowStepPlaces)          k < PowNATPlaces (100): 2× at the 100th
//	pow_cost × (2 + (k − 99) / PowSteepPlaces)        beyond: one more pow_cost every 8 places
//	at most PowMaxFactor × pow_cost
//
// (the divisions round down). Gentle up to a carrier-grade NAT's hundred
// people behind one address, whose 100th place costs 2× (headless
// Chromium's time is in docs/benchmarks.md: a try's luck is geometric, so
// the tail is 3× the mean), steep beyond, where one address is a crowd no
// NAT of that size would be: 200 places cost 14.5× for the 200th, and
// 1,000 places about 52,000 × pow_cost runs in all, 5.4 core-hours at the
// default (3.7 ms a run), 2,000 24 and 5,000 155 (the total grows with the
// square of the count). A squatter's steady rate on one quiet core is 0.43
// places a second, 0.54 on two (docs/benchmarks.md, "The attacker's share").
const (
	PowFreePlaces  = 4
	PowNATPlaces   = 100
	PowStepPlaces  = 96
	PowSteepPlaces = 8
	PowMaxFactor   = 1000
)

// ErrUnderpaid: the solution paid less than a new place of this network
// costs now (the network took places since its challenge was issued).
var ErrUnderpaid = errors.New("queue: the proof of work paid less than this network's next place costs")

// PowPrice is the expected scrypt runs of a new place for a network that
// holds held live places in a room of bp.
func PowPrice(bp BotProtection, held int64) int64 {
	base := max(bp.PowCost, 1)
	switch {
	case held < PowFreePlaces:
		return base
	case held < PowNATPlaces:
		return base + base*(held-PowFreePlaces+1)/PowStepPlaces
	}
	steps := held - PowNATPlaces + 1
	if steps >= PowSteepPlaces*(PowMaxFactor-2) {
		return base * PowMaxFactor
	}
	return 2*base + base*steps/PowSteepPlaces
}

// powUnlimited is a bound no network reaches: a price at the cap buys any place.
const powUnlimited = 1 << 50

// PowPlaces is how many places a network may hold and still buy one more
// with a solution of paid runs: one more than the largest held whose price
// is at most paid (0 when paid buys no place at all).
func PowPlaces(bp BotProtection, paid int64) int64 {
	if paid < PowPrice(bp, 0) {
		return 0
	}
	if paid >= PowPrice(bp, powUnlimited) {
		return powUnlimited
	}
	lo, hi := int64(0), int64(powUnlimited) // price(lo) <= paid < price(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if PowPrice(bp, mid) <= paid {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

// PlacesHeld is how many live places the client bucket holds in room, as
// the store counts them (Limits.PlacesHeld): what its next place costs.
func (l *Line) PlacesHeld(ctx context.Context, room, bucket string) (int64, error) {
	return l.store.PlacesHeld(ctx, room, bucket, l.clock.Now())
}
