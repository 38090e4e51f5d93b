package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// Lease takes or renews room's admitter lease for holder (lease.lua).
func (s *Store) Lease(ctx context.Context, room, holder string, now time.Time, ttl, interval time.Duration, admitted time.Time) (queue.Lease, error) {
	var at int64
	if !admitted.IsZero() {
		at = ms(admitted)
	}
	res, err := s.call(ctx, leaseArgs{Admitter: keysFor(s.prefix, room).admitter,
		Holder: holder, Now: ms(now), TTL: max(ttl.Milliseconds(), 1), Interval: max(interval.Milliseconds(), 1),
		Admitted: at, Kept: queue.LeaseKept.Milliseconds()}).Slice()
	if err != nil {
		return queue.Lease{}, fail("lease "+room, err)
	}
	if len(res) != 6 {
		return queue.Lease{}, fmt.Errorf("redisstore: lease %s: unexpected reply %v", room, res)
	}
	l := queue.Lease{Held: toInt(res[0]) == 1, Due: toInt(res[1]) == 1, Holder: str(res[2]),
		Until: time.UnixMilli(toInt(res[3])), Previous: str(res[5])}
	if t := toInt(res[4]); t > 0 {
		l.LastTick = time.UnixMilli(t)
	}
	return l, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
