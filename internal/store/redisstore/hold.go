package redisstore

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// Hold reports whether holder may use the token of ticket, binding it to
// holder when nobody holds it yet; the binding lasts ttl, the token's life.
func (s *Store) Hold(ctx context.Context, room, ticket, holder string, mode queue.HoldMode, ttl time.Duration) (bool, error) {
	k := keysFor(s.prefix, room)
	n, err := s.call(ctx, holdArgs{Tickets: k.tickets, HolderKey: holderKey(s.prefix, room, ticket), Base: k.base,
		ID: ticket, Holder: holder, TTL: max(ttl.Milliseconds(), 1), Mode: string(mode), Packed: packIdentity(holder)}).Int()
	if err != nil {
		return false, fail("hold", err)
	}
	return n == 1, nil
}
