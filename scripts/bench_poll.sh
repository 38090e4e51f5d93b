#!/usr/bin/env bash
# bench_poll.sh: a peer-style flash crowd against the built waitroom
# (docs/benchmarks.md, "Polling waiters from the local view"). It starts a
# fresh redis-server and waitroom on free loopback ports, then cmd/seedload
# crowd, once per mode in a room of its own without proof of work: VISITORS
# visitors arrive ARRIVE at a time every ARRIVE_EVERY, the room admits
# BATCH_SIZE every BATCH_INTERVAL, and each visitor waits until admitted,
# either polling GET /api/rooms/{room}/tickets/{ticket} every POLL_EVERY
# (poll) or on the page's WebSocket (ws). Per mode it prints the time until
# all were admitted, FIFO inversions, Redis commands per HTTP request (INFO
# commandstats), Redis and server CPU per request (INFO cpu, /proc) and the
# 5xx answers. Every step is bounded in count and time; loopback only.
#
# Knobs (environment): VISITORS (2000), ARRIVE (50), ARRIVE_EVERY (2s),
# BATCH_SIZE (20), BATCH_INTERVAL (1s), POLL_EVERY (1s), MODES (poll,ws),
# RUN_TIMEOUT (5m a mode), BENCH_HOST (127.0.0.1: the servers' address),
# SOURCES (1) and SOURCE_FIRST (127.0.0.1): the client's source addresses,
# PORT_LOW and PORT_SPAN: the listeners' ports, NOFILE (65536), KEEP=1 (keep
# the work directory with logs and the JSON result), COMMIT.
set -euo pipefail

cd "$(dirname "$0")/.."
VISITORS=${VISITORS:-2000}
ARRIVE=${ARRIVE:-50}
ARRIVE_EVERY=${ARRIVE_EVERY:-2s}
BATCH_SIZE=${BATCH_SIZE:-20}
BATCH_INTERVAL=${BATCH_INTERVAL:-1s}
POLL_EVERY=${POLL_EVERY:-1s}
MODES=${MODES:-poll,ws}
RUN_TIMEOUT=${RUN_TIMEOUT:-5m}
SOURCES=${SOURCES:-1}
SOURCE_FIRST=${SOURCE_FIRST:-127.0.0.1}
NOFILE=${NOFILE:-65536}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench_poll
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

# One socket per WebSocket waiter on each side.
raise_nofile "$NOFILE" $((2 * VISITORS + 1000)) "$VISITORS visitors"

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/seedload" ./cmd/seedload

start_redis
# Per-address limits off: the whole crowd comes from a few addresses.
start_waitroom --push-per-ip 0 --max-conns 0 --max-conns-per-ip 0

describe_machine

echo
echo "== seedload crowd: $VISITORS visitors, $ARRIVE every $ARRIVE_EVERY, admitted $BATCH_SIZE every $BATCH_INTERVAL ($MODES)"
# seedload bounds each mode (--run-timeout); timeout is a backstop.
modes=$(($(tr -cd , <<<"$MODES" | wc -c) + 1))
timeout $((modes * 660))s "$work/seedload" crowd --url "$base" --admin-token "$ADMIN_TOKEN" \
	--visitors "$VISITORS" --arrive "$ARRIVE" --arrive-every "$ARRIVE_EVERY" --poll-every "$POLL_EVERY" \
	--batch-size "$BATCH_SIZE" --batch-interval "$BATCH_INTERVAL" --modes "$MODES" --run-timeout "$RUN_TIMEOUT" \
	--sources "$SOURCES" --source-first "$SOURCE_FIRST" \
	--redis-addr "$bench_host:$redis_port" --server-pid "$waitroom_pid" | tee "$work/crowd.out" || {
	echo "bench_poll: seedload crowd failed" >&2
	exit 1
}
echo "busy after the run (other processes, 3s): $(busy) of all cores"
if grep -q 'level=\(WARN\|ERROR\)' "$work/waitroom.log"; then
	echo
	echo "== waitroom log (warnings and errors, last 20)"
	grep 'level=\(WARN\|ERROR\)' "$work/waitroom.log" | tail -n 20
fi
