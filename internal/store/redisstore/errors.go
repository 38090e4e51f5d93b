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
// also matches queue.ErrUnavailable, the only form in which HTTP code sees it,
// and queue.ErrStoreDown when that is certain (Down).
func fail(action string, err error) error {
	if errors.Is(err, redis.ErrPoolTimeout) {
		return fmt.Errorf("redisstore: %s: %w: %w", action, queue.ErrBusy, err)
	}
	if Down(err) {
		return fmt.Errorf("redisstore: %s: %w: %w", action, queue.ErrStoreDown, err)
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
	if errors.Is(err, queue.ErrUnavailable) || Down(err) || answered(err, "TRYAGAIN") {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, redis.ErrClosed) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Down reports whether err means for certain that Redis cannot be used now:
// nothing listens at its address (the connection was refused: the process is
// gone), or Redis itself answered that it cannot serve (out of memory,
// loading, no master, cluster down). A timeout, a reset, a closed connection
// or a TRYAGAIN (a slot moving) is not certain: a server starved of CPU sees
// the first ones from a Redis that answers.
func Down(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, queue.ErrStoreDown) || errors.Is(err, syscall.ECONNREFUSED) || OutOfMemory(err) {
		return true
	}
	return answered(err, "LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN")
}

// answered reports whether Redis answered err with one of the prefixes:
// that it cannot serve yet (replaying its AOF, a replica without its master,
// a cluster down or re-sharding), which is not an answer.
func answered(err error, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(err.Error(), p+" ") {
			return true
		}
	}
	return false
}

// OutOfMemory reports whether Redis refused a write for memory ("OOM command
// not allowed when used memory > 'maxmemory'"), also from inside a script.
func OutOfMemory(err error) bool {
	return err != nil && strings.Contains(err.Error(), "OOM command not allowed")
}
