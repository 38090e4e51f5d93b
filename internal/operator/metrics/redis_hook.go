package metrics

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/waitroom/waitroom/internal/store/redisstore"
)

// RedisHook returns a go-redis hook timing every command and pipeline and
// counting failures; add it to the client before it is used.
func (m *Metrics) RedisHook() redis.Hook { return redisHook{m} }

type redisHook struct{ m *Metrics }

// DialHook counts failed dials: a dead Redis refuses connections before any
// command can fail.
func (h redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil && ctx.Err() == nil {
			h.m.redisErrors.WithLabelValues("dial", "unreachable").Inc()
		}
		return conn, err
	}
}

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.m.observeRedis(cmd.Name(), time.Since(start), err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.m.observeRedis("pipeline", time.Since(start), err)
		return err
	}
}

// observeRedis records one command. Answers that are part of normal work
// are not errors: a missing key (redis.Nil), a script not yet cached
// (NOSCRIPT: go-redis sends it again with EVAL), a caller that went away.
func (m *Metrics) observeRedis(cmd string, d time.Duration, err error) {
	m.redisDuration.WithLabelValues(cmd).Observe(d.Seconds())
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) ||
		strings.HasPrefix(err.Error(), "NOSCRIPT") {
		return
	}
	kind := "reply"
	if redisstore.Unreachable(err) {
		kind = "unreachable"
	}
	m.redisErrors.WithLabelValues(cmd, kind).Inc()
}
