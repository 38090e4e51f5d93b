package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// NewClient is the client a server uses: FailFast's options, and scripts
// sent once (ScriptsOnce). It serves a single server, Sentinel and Cluster.
func NewClient(o *redis.UniversalOptions) redis.UniversalClient {
	c := redis.NewUniversalClient(FailFast(o))
	c.AddHook(ScriptsOnce())
	return c
}

// ScriptsOnce returns a go-redis hook that sends each script call (EVAL,
// EVALSHA and their read-only forms) at most once. go-redis retries a call
// whose reply did not come within the read timeout, and a script that timed
// out may well have run: a retried tick admits nothing more (its budget is
// spent) and enter and leave are idempotent, but under a stall every retry
// is one more script on a Redis that is already behind. A failed script
// fails its caller, whose failure counts toward degraded mode. Other
// commands keep the client's retries; a redirect (MOVED, ASK) in a cluster
// is not a retry and still follows.
func ScriptsOnce() redis.Hook { return scriptsOnce{} }

type scriptsOnce struct{}

// onceCmd is a script call that go-redis must not send again once written:
// its reply and error are the wrapped command's.
type onceCmd struct{ *redis.Cmd }

func (onceCmd) NoRetry() bool { return true }

func once(cmd redis.Cmder) redis.Cmder {
	c, ok := cmd.(*redis.Cmd)
	if !ok {
		return cmd
	}
	switch c.Name() {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro":
		return onceCmd{c}
	}
	return cmd
}

func (scriptsOnce) DialHook(next redis.DialHook) redis.DialHook { return next }

func (scriptsOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return next(ctx, once(cmd)) }
}

// ProcessPipelineHook: a pipeline with a script is not sent again either
// (go-redis retries a pipeline whole).
func (scriptsOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for i, cmd := range cmds {
			if o := once(cmd); o != cmd {
				wrapped := make([]redis.Cmder, len(cmds))
				copy(wrapped, cmds[:i])
				for j := i; j < len(cmds); j++ {
					wrapped[j] = once(cmds[j])
				}
				return next(ctx, wrapped)
			}
		}
		return next(ctx, cmds)
	}
}
