package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// redisLogger sends go-redis's own messages (pool and dial trouble)
// through slog, so --log-format json stays JSON. They go out at debug
// level: during an outage go-redis repeats them for every dial, while the
// availability flag reports the outage once and each failed call's error
// reaches its caller anyway.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.Log(ctx, slog.LevelDebug, "redis: "+strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// useRedisLogger installs log as go-redis's logger; go-redis has one
// logger for the whole process.
func useRedisLogger(log *slog.Logger) { redis.SetLogger(redisLogger{log}) }
