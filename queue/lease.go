package queue

import (
	"context"
	"time"
)

// Leases lets one server at a time admit a room's line. Every server runs
// every room's loop; only the lease's holder ticks, so ticks follow one
// clock and the pace holds in every sliding window, not only per bucket.
type Leases interface {
	// Lease takes room's admitter lease for holder, or renews it, until
	// now+ttl. It succeeds when holder holds it, nobody does, or the
	// holder's lease ended; a holder that lost it to another learns so here.
	// admitted, when not zero, is the start of a tick of this server that
	// admitted someone: the lease keeps the latest such start of any holder,
	// and a tick is due only an interval after it, so a new holder keeps
	// the pace of the one before.
	Lease(ctx context.Context, room, holder string, now time.Time, ttl, interval time.Duration, admitted time.Time) (Lease, error)
}

// Lease is the state of a room's admitter lease after a Lease call.
type Lease struct {
	Held     bool      // the caller holds it until Until
	Due      bool      // Held, and an interval has passed since LastTick: this tick may admit
	Holder   string    // who holds it (the caller when Held)
	Until    time.Time // when the lease ends unless its holder renews it
	LastTick time.Time // start of the last tick that admitted someone (zero: none known)
	// Previous is the holder whose ended lease this call took over, if any.
	Previous string
}

// Lease lengths: about two intervals, so a dead holder is replaced within a
// tick or two, but never so short that a Redis hiccup moves it every tick,
// nor so long that a room with a minute-long interval waits minutes.
const (
	leaseMin = 200 * time.Millisecond
	leaseMax = 10 * time.Second
)

// LeaseTTL is the lease length for a room ticking every interval.
func LeaseTTL(interval time.Duration) time.Duration {
	return min(max(2*interval, leaseMin), leaseMax)
}

// LeaseKept is how long a store keeps a lease's record after it ended: long
// enough that no clock hiccup loses the last tick's start, and the record
// still goes once nobody admits the room.
const LeaseKept = time.Minute
