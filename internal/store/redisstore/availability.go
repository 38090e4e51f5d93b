package redisstore

import (
	"context"
	"errors"
	"net"
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
		if errors.Is(err, redis.ErrPoolTimeout) || ranOutOfTime(ctx, err) {
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

// ranOutOfTime reports whether a call failed because its caller's own
// deadline passed before Redis was asked or could answer on the socket:
// waiting for a pool connection or in a retry's backoff (go-redis returns the
// context's error bare; a socket that timed out is a *net.OpError). A busy
// server sees that from a Redis that answers.
func ranOutOfTime(ctx context.Context, err error) bool {
	var op *net.OpError
	return ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &op)
}

// ProbeOptions are the availability probe's own client's, from a copy of the
// main client's options: one connection per node, so a busy server's pool
// cannot keep the probe waiting, no retries, and the probe's timeout on the
// socket. A probe that fails asked Redis and got no answer in 400 ms.
func ProbeOptions(o redis.UniversalOptions) *redis.UniversalOptions {
	o.PoolSize, o.MinIdleConns, o.MaxIdleConns = 1, 0, 1
	o.MaxRetries, o.DialerRetries = -1, 1
	o.DialTimeout = 250 * time.Millisecond
	o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = 400*time.Millisecond, 400*time.Millisecond, 400*time.Millisecond
	return &o
}

// FailFast tunes a client so that calls fail within about a second when Redis
// is gone, instead of retrying with backoff: the availability flag then
// switches to degraded mode before visitors give up. Timeouts stay well above
// Redis's normal sub-millisecond answers. One dial attempt per call: go-redis
// otherwise redials five times 100 ms apart, so a refused connection (Redis
// gone, a certain outage) reaches the caller as its context's timeout, which
// degraded mode must wait out (queue.Availability).
// One retry of a failed call; NewClient's ScriptsOnce takes it away from
// scripts. It takes UniversalOptions, which serve a single server as well as
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
