package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

// Hook returns a go-redis hook that feeds every command's outcome to a,
// translated to the core's errors (queue.ErrUnavailable).
func Hook(a *queue.Availability) redis.Hook { return availabilityHook{a} }

type availabilityHook struct{ a *queue.Availability }

func (h availabilityHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h availabilityHook) record(ctx context.Context, err error) {
	if queue.Counted(ctx) {
		if errors.Is(err, redis.ErrPoolTimeout) {
			return // this server is busy, Redis is not gone: neither a failure nor an answer
		}
		if Unreachable(err) {
			err = fail("call", err)
		}
		h.a.Record(err)
	}
}

func (h availabilityHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.record(ctx, err)
		return err
	}
}

func (h availabilityHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.record(ctx, err)
		return err
	}
}

// FailFast tunes a client so that calls fail within about a second when Redis
// is gone, instead of retrying with backoff: the availability flag then
// switches to degraded mode before visitors give up. Timeouts stay well above
// Redis's normal sub-millisecond answers. One dial attempt per call: go-redis
// otherwise redials five times 100 ms apart, so a refused connection (Redis
// gone, a certain outage) reaches the caller as its context's timeout, which
// degraded mode must wait out (queue.Availability).
// It takes UniversalOptions, which serve a single server as well as
// Sentinel and Cluster.
func FailFast(o *redis.UniversalOptions) *redis.UniversalOptions {
	o.MaxRetries = 1
	o.DialerRetries = 1
	o.DialTimeout = 250 * time.Millisecond
	o.ReadTimeout = 500 * time.Millisecond
	o.WriteTimeout = 500 * time.Millisecond
	o.PoolTimeout = 500 * time.Millisecond
	return o
}
