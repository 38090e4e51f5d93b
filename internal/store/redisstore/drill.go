package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Probe writes a small key and reads the deployment's degraded-mode drill:
// "on", or absent for automatic (an "off" left by an older server is
// automatic too). It is the availability flag's probe; it writes so that a
// Redis refusing writes for memory does not look recovered because reads
// still work.
func (s *Store) Probe(ctx context.Context) (*bool, error) {
	if err := s.rdb.Set(ctx, s.aliveKey(), "1", 10*time.Second).Err(); err != nil {
		return nil, fail("probe", err)
	}
	v, err := s.rdb.Get(ctx, s.drillKey()).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, fail("probe", err)
	}
	if v != "on" {
		return nil, nil
	}
	on := true
	return &on, nil
}

// SetDrill stores the drill for every server; nil or false returns to automatic.
func (s *Store) SetDrill(ctx context.Context, on *bool) error {
	var err error
	if on != nil && *on {
		err = s.rdb.Set(ctx, s.drillKey(), "on", 0).Err()
	} else {
		err = s.rdb.Del(ctx, s.drillKey()).Err()
	}
	if err != nil {
		return fail("set drill", err)
	}
	return nil
}
