#!/usr/bin/env bash
# bench_ws.sh: the WebSocket-waiters benchmark of docs/benchmarks.md, end to
# end on this machine. It starts a fresh redis-server and waitroom on free
# loopback ports with a raised file-descriptor limit, then cmd/wsload holds
# CONNS WebSocket waiters open for DURATION while the room admits at a steady
# pace, and stops everything it started. Every step is bounded in count and
# time.
#
# Knobs (environment): CONNS (10000), DURATION (60s), CONCURRENCY (100
# visitors entering at once), BATCH_SIZE (10) and BATCH_INTERVAL (200ms): the
# pace, SETTLE (5s), RAMP_TIMEOUT (180s), SOURCES (1: source addresses
# 127.0.0.1..N for the client), START_PAUSED=1 (the line stands still until
# the window, then every waiter is pushed at once), NOFILE (65536),
# KEEP=1 (keep the work directory with logs and the JSON result), COMMIT,
# PORT_LOW and PORT_SPAN (1000): the listeners' ports, on a shared machine,
# BY_KIND (0): seconds of the window in which scripts/redis_by_kind.sh
# attributes Redis's commands to what sent them (MONITOR: it costs Redis
# CPU, so the window's Redis CPU is not comparable with a run without it).
set -euo pipefail

cd "$(dirname "$0")/.."
CONNS=${CONNS:-10000}
DURATION=${DURATION:-60s}
CONCURRENCY=${CONCURRENCY:-100}
BATCH_SIZE=${BATCH_SIZE:-10}
BATCH_INTERVAL=${BATCH_INTERVAL:-200ms}
SETTLE=${SETTLE:-5s}
RAMP_TIMEOUT=${RAMP_TIMEOUT:-180s}
SOURCES=${SOURCES:-1}
START_PAUSED=${START_PAUSED:-0}
NOFILE=${NOFILE:-65536}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench_ws
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

# One socket per waiter on each side, plus Redis and HTTP connections.
raise_nofile "$NOFILE" $((CONNS + 1000)) "$CONNS connections"

# free_port picks a random port that no socket uses, below the ephemeral
# range: tens of thousands of client sockets come and go from that range
# during a run, and a listener cannot bind a port an outgoing connection holds.
free_port() {
	local p lo
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range)
	for _ in $(seq 50); do
		p=$((10000 + RANDOM % (lo - 10000)))
		# PORT_LOW (and PORT_SPAN, default 1000) pin the range, for a shared machine.
		[[ -n ${PORT_LOW:-} ]] && p=$((PORT_LOW + RANDOM % ${PORT_SPAN:-1000}))
		if [[ -z $(ss -Htan "sport = :$p") ]]; then
			echo "$p"
			return
		fi
	done
	echo "bench_ws: no free port found" >&2
	return 1
}

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/wsload" ./cmd/wsload

start_redis

start_waitroom --push-per-ip 0 --max-conns 0 --max-conns-per-ip 0

describe_machine

echo
echo "== wsload: $CONNS waiters, $DURATION, pace $BATCH_SIZE every $BATCH_INTERVAL"
paused=()
[[ $START_PAUSED == 1 ]] && paused=(--start-paused)
if ((${BY_KIND:-0} > 0)); then
	# From the window's start (wsload says so on stderr), bounded by the ramp's timeout.
	(
		for _ in $(seq $((2 * ${RAMP_TIMEOUT%s} + 60))); do
			grep -qs 'measuring for' "$work/wsload.log" && break
			sleep 0.5
		done
		grep -qs 'measuring for' "$work/wsload.log" || exit 0
		scripts/redis_by_kind.sh "$redis_port" "$BY_KIND" >"$work/by_kind.txt" 2>&1
	) &
	by_kind_pid=$!
fi
# wsload bounds itself (ramp + settle + duration + 30s); timeout is a backstop.
timeout 20m "$work/wsload" --url "$base" --admin-token "$ADMIN_TOKEN" --room wsbench \
	--conns "$CONNS" --concurrency "$CONCURRENCY" --duration "$DURATION" --settle "$SETTLE" \
	--ramp-timeout "$RAMP_TIMEOUT" --sources "$SOURCES" \
	--batch-size "$BATCH_SIZE" --batch-interval "$BATCH_INTERVAL" "${paused[@]}" \
	--server-pid "$waitroom_pid" --redis-addr "127.0.0.1:$redis_port" \
	>"$work/wsload.out" 2> >(tee "$work/wsload.log" >&2) || {
	cat "$work/wsload.out"
	echo "bench_ws: wsload failed" >&2
	exit 1
}
head -n -1 "$work/wsload.out"
tail -n 1 "$work/wsload.out" >"$work/wsload.json"

if [[ -n ${by_kind_pid:-} ]]; then
	wait "$by_kind_pid" || true
	echo
	echo "== Redis commands by kind (MONITOR, $BY_KIND s of the window)"
	cat "$work/by_kind.txt" 2>/dev/null || true
fi
echo
echo "busy after the run (other processes, 3s): $(busy) of all cores"
if grep -qvE '^\s*$' "$work/waitroom.log"; then
	echo
	echo "== waitroom log (warnings and errors, last 20 lines)"
	tail -n 20 "$work/waitroom.log"
fi
echo
echo "== JSON"
cat "$work/wsload.json"
