package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

// fail wraps a Redis error for action; one that means Redis cannot be used
// also matches queue.ErrUnavailable, the only form in which HTTP code sees it.
func fail(action string, err error) error {
	if errors.Is(err, redis.ErrPoolTimeout) {
		return fmt.Errorf("redisstore: %s: %w: %w", action, queue.ErrBusy, err)
	}
	if Unreachable(err) {
		return fmt.Errorf("redisstore: %s: %w: %w", action, queue.ErrUnavailable, err)
	}
	return fmt.Errorf("redisstore: %s: %w", action, err)
}

// Unreachable reports whether err means Redis cannot be used: it could not
// be reached, or it refuses writes because it reached maxmemory (with
// noeviction), as opposed to Redis answering with an error. Either way the
// caller gets 503 with Retry-After and the failure counts towards degraded mode.
// A pool timeout is not: every connection is busy with calls Redis is
// answering (this server is overloaded); a Redis that stopped answering shows
// as those calls' timeouts and the probe's.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	if errors.Is(err, queue.ErrUnavailable) || OutOfMemory(err) {
		return true
	}
	// Redis answering that it cannot serve yet (replaying its AOF, a
	// replica without its master, a cluster re-sharding) is not an answer.
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"} {
		if strings.HasPrefix(err.Error(), p+" ") {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, redis.ErrClosed) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// OutOfMemory reports whether Redis refused a write for memory ("OOM command
// not allowed when used memory > 'maxmemory'"), also from inside a script.
func OutOfMemory(err error) bool {
	return err != nil && strings.Contains(err.Error(), "OOM command not allowed")
}
