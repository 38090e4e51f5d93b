package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// meet waits until peers processes have reached point: each leaves a file
// named point.<self> in dir and waits for peers of them, or for timeout.
// Peers holding a crowd together meet before each window, so their windows
// coincide, and after it, so that none closes its sockets (or ramps to the
// next stage) inside another's window: the first peer's Redis and server
// figures are the crowd's steady state, not a neighbour's teardown.
func meet(ctx context.Context, dir, point, self string, peers int, timeout time.Duration) error {
	if err := os.WriteFile(filepath.Join(dir, point+"."+self), nil, 0o644); err != nil {
		return fmt.Errorf("wsload: barrier %s: %w", point, err)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := arrived(dir, point)
		if err != nil {
			return err
		}
		if n >= peers {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("wsload: barrier %s: %d of %d peers after %s", point, n, peers, timeout)
		case <-tick.C:
		}
	}
}

// arrived counts the peers that have reached point.
func arrived(dir, point string) (int, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("wsload: barrier %s: %w", point, err)
	}
	n := 0
	for _, e := range es {
		if strings.HasPrefix(e.Name(), point+".") {
			n++
		}
	}
	return n, nil
}
