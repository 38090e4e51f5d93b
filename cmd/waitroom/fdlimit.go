package main

import (
	"fmt"
	"log/slog"

	"github.com/waitroom/waitroom/server"
)

// The descriptors kept back from --max-conns for everything but visitors'
// connections: the Redis pool (256 per node, see parseRedisURL) and its
// probe, Kafka, the outbox, the snapshot, refused connections being
// answered (64 at once) and the logs. A tenth of the file limit, and at
// least 512 (half of a limit under 1,024).
func fdReserve(limit uint64) uint64 { return max(limit/10, min(512, limit/2)) }

// autoConnsCeiling bounds --max-conns auto where the file limit is huge
// (a container's 1,048,576): each connection also costs memory.
const autoConnsCeiling = 100_000

// unknownLimitConns is --max-conns auto where the file limit cannot be read.
const unknownLimitConns = 20_000

// connCap is the overall connection cap: --max-conns as given (0: none),
// or auto, checked against the process's file limit (0: unknown) so that
// connections can never take the descriptors Redis, Kafka and the server's
// own loops need.
func connCap(flag autoInt, limit uint64) (int, error) {
	if limit == 0 {
		if !flag.set {
			return unknownLimitConns, nil
		}
		return flag.v, nil
	}
	room := limit - fdReserve(limit)
	if !flag.set {
		return int(min(room, autoConnsCeiling)), nil
	}
	if flag.v > 0 && uint64(flag.v) > room {
		return 0, fmt.Errorf("--max-conns %d: over the %d connections this process may hold: its open-file limit %d less %d kept for Redis, Kafka and its own files (raise the hard limit, e.g. ulimit -Hn or systemd's LimitNOFILE, or lower --max-conns)",
			flag.v, room, limit, fdReserve(limit))
	}
	return flag.v, nil
}

// perClientCap is --max-conns-per-ip: as given, or auto: DefaultConnsPerClient,
// or a quarter of the overall cap when that is less, so that one address
// never holds the whole server.
func perClientCap(flag autoInt, maxConns int) int {
	if flag.set {
		return flag.v
	}
	if maxConns > 0 {
		return min(server.DefaultConnsPerClient, max(1, maxConns/4))
	}
	return server.DefaultConnsPerClient
}

// raiseAndCap raises the open-file limit to its hard limit, logs it, and
// returns the overall and per-address connection caps.
func raiseAndCap(cfg config, log *slog.Logger) (maxConns, perClient int, _ error) {
	before, limit, err := raiseFileLimit()
	if err != nil {
		log.Warn("open-file limit: could not raise it to the hard limit", "err", err, "limit", limit)
	}
	maxConns, err = connCap(cfg.MaxConns, limit)
	if err != nil {
		return 0, 0, fmt.Errorf("config: %w", err)
	}
	perClient = perClientCap(cfg.MaxConnsPerIP, maxConns)
	log.Info("open-file limit", "was", before, "now", limit, "reserved", fdReserve(limit), "max_conns", maxConns,
		"max_conns_per_ip", perClient, "idle_timeout", cfg.IdleTimeout.String())
	if maxConns == 0 {
		log.Warn("--max-conns 0: no overall connection cap; clients together can take every file descriptor, Redis's and Kafka's included")
	}
	return maxConns, perClient, nil
}
