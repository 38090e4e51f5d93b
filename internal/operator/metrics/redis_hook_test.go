package metrics_test

import (
	"context"
	"net"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/operator/metrics"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

func TestRedisHook(t *testing.T) {
	ctx := context.Background()
	m, reg := newMetrics(t, metrics.Sources{})
	rdb := redistest.Shared(t).Client(t)
	rdb.AddHook(m.RedisHook())
	key := redistest.Prefix(t) + "k"

	if err := rdb.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Get(ctx, key+"-missing").Err(); err != redis.Nil {
		t.Fatal(err)
	}
	if err := rdb.Incr(ctx, key).Err(); err == nil { // "v" is not a number: Redis answers an error
		t.Fatal("INCR of a string succeeded")
	}
	count := func(name string, labels ...string) float64 {
		v, _ := value(t, reg, name, labels...)
		return v
	}
	// Opening a connection runs a pipeline of its own (HELLO, CLIENT SETINFO),
	// and the pool may open one for the next.
	pipelines := count("waitroom_redis_command_duration_seconds", "cmd", "pipeline")
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, key)
		p.Exists(ctx, key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A script new to the server: EVALSHA answers NOSCRIPT, go-redis runs EVAL.
	if err := redis.NewScript("return '"+key+"'").Run(ctx, rdb, nil).Err(); err != nil {
		t.Fatal(err)
	}

	if count("waitroom_redis_command_duration_seconds", "cmd", "set") != 1 ||
		count("waitroom_redis_command_duration_seconds", "cmd", "pipeline") < pipelines+1 ||
		count("waitroom_redis_command_duration_seconds", "cmd", "eval") != 1 {
		t.Fatal("commands not timed")
	}
	if count("waitroom_redis_errors_total", "cmd", "incr", "kind", "reply") != 1 {
		t.Fatal("an error reply not counted")
	}
	for _, cmd := range []string{"get", "evalsha", "set"} {
		if v, ok := value(t, reg, "waitroom_redis_errors_total", "cmd", cmd); ok {
			t.Fatalf("%s counted %v errors: redis.Nil and NOSCRIPT are answers", cmd, v)
		}
	}

	// A Redis that is gone: the dial and the command count as unreachable.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	dead := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	defer func() { _ = dead.Close() }()
	dead.AddHook(m.RedisHook())
	if err := dead.Ping(ctx).Err(); err == nil {
		t.Fatal("ping of a closed port answered")
	}
	if count("waitroom_redis_errors_total", "cmd", "dial", "kind", "unreachable") < 1 ||
		count("waitroom_redis_errors_total", "cmd", "ping", "kind", "unreachable") != 1 {
		t.Fatal("an unreachable Redis not counted")
	}
}
