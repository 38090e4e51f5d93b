package redisstore

import (
	"context"
	"time"
)

// Handoff redeems the hand-off code (ticket, nonce) once and binds the
// ticket's token to holder (lua/handoff.lua).
func (s *Store) Handoff(ctx context.Context, room, ticket, nonce, holder string, codeTTL, holdTTL time.Duration) (bool, error) {
	n, err := s.call(ctx, handoffArgs{Code: handoffKey(s.prefix, room, ticket, nonce), HolderKey: holderKey(s.prefix, room, ticket),
		CodeTTL: max(codeTTL.Milliseconds(), 1), Holder: holder, HoldTTL: max(holdTTL.Milliseconds(), 1)}).Int()
	if err != nil {
		return false, fail("handoff", err)
	}
	return n == 1, nil
}
