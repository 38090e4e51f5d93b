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
	n, err := s.run(ctx, holdScript, []string{k.tickets, holderKey(s.prefix, room, ticket), k.base},
		ticket, holder, max(ttl.Milliseconds(), 1), string(mode), packIdentity(holder)).Int()
	if err != nil {
		return false, fail("hold", err)
	}
	return n == 1, nil
}
