package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisRevocations keeps signed-out sessions in Redis, one key each, gone
// when the session would have expired anyway.
type RedisRevocations struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRedisRevocations records revocations under prefix (e.g. "wr:").
func NewRedisRevocations(rdb redis.UniversalClient, prefix string) *RedisRevocations {
	return &RedisRevocations{rdb: rdb, prefix: prefix + "admin:revoked:"}
}

// Revoke records id as signed out until until.
func (r *RedisRevocations) Revoke(ctx context.Context, id string, until time.Time) error {
	if err := r.rdb.SetArgs(ctx, r.prefix+id, "1", redis.SetArgs{ExpireAt: until}).Err(); err != nil {
		return fmt.Errorf("dashboard: record sign-out: %w", err)
	}
	return nil
}

// Revoked reports whether id was signed out on any server.
func (r *RedisRevocations) Revoked(ctx context.Context, id string) (bool, error) {
	n, err := r.rdb.Exists(ctx, r.prefix+id).Result()
	if err != nil {
		return false, fmt.Errorf("dashboard: read sign-outs: %w", err)
	}
	return n > 0, nil
}
