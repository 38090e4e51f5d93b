package queue

import (
	"context"
	"errors"
)

// The price of a place with proof of work on rises with the live places
// (waiting, pre-queue or admitted) that the client's network already holds
// in the room: the first PowFreePlaces cost the room's pow_cost, and each
// PowStepPlaces further places add pow_cost again, up to PowMaxFactor times
// pow_cost. The k-th place of a network (k from 0) costs
//
//	pow_cost                                       k < PowFreePlaces
//	pow_cost × (1 + (k − PowFreePlaces + 1) / PowStepPlaces), at most PowMaxFactor × pow_cost
//
// (the division rounds down, in expected scrypt runs). A carrier-grade NAT
// with a hundred people behind one address pays 4× for its 100th place
// (docs/benchmarks.md has headless Chromium's time: a try's luck is
// geometric, so the tail is 3× the mean), while one address taking 1,000
// places pays about 16,500 × pow_cost runs in all: 1.7 core-hours at the
// default (3.7 ms a run), 6.6 for 2,000, 41 for 5,000 (the total grows with
// the square of the count).
const (
	PowFreePlaces = 4
	PowStepPlaces = 32
	PowMaxFactor  = 1000
)

// ErrUnderpaid: the solution paid less than a new place of this network
// costs now (the network took places since its challenge was issued).
var ErrUnderpaid = errors.New("queue: the proof of work paid less than this network's next place costs")

// PowPrice is the expected scrypt runs of a new place for a network that
// holds held live places in a room of bp.
func PowPrice(bp BotProtection, held int64) int64 {
	base := max(bp.PowCost, 1)
	if held < PowFreePlaces {
		return base
	}
	steps := held - PowFreePlaces + 1
	if steps >= PowStepPlaces*(PowMaxFactor-1) {
		return base * PowMaxFactor
	}
	return base + base*steps/PowStepPlaces
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
