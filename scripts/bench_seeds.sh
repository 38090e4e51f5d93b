#!/usr/bin/env bash
# bench_seeds.sh: the seed post's two tables (shared/seeds/, "대기열, 시스템을
# 보호하라 (2)") reproduced with waitroom in one run, on this machine, and
# printed beside the seed's figures (docs/benchmarks.md, "Issue 13: the
# seeds' tables"). It starts a fresh redis-server and waitroom on free
# loopback ports, waitroom's gate in front of cmd/seedload's test checkout,
# then:
#
# 1. Checkout response time (seedload herd): VISITORS enter one room and
#    wait on a WebSocket; then the room admits them at 50/s and each places
#    one order through the gate at its orderable_at. Run A: 50 every
#    1,000 ms, no jitter (the seed's before); run B: 10 every 200 ms with
#    JITTER (its after). The checkout is a fixed pool of WORKERS workers, each
#    SERVICE per order, with the orders that find none free queued: a real
#    order API slows with concurrency because its threads and database
#    connections are a fixed pool, so a burst waits in line for them while
#    the same orders spread out find one free. (A linear "base + k x in
#    flight" model would say the same, but invents its slope.) 8 x 20 ms is
#    400 orders/s, eight times the pace: the checkout keeps up on average and
#    only the bursts queue.
# 2. Requests per second on the servers (seedload polling): WAITERS waiters
#    per mode in a room of their own whose line moves slowly (1 a second, so
#    places hold nearly steady), for WINDOW each: flat 5 s polling (the
#    seed's before), flat 1 s polling, tiered polling (next_update_ms, the
#    room's tiers set as the seed's 1-100: 2 s, 101-500: 5 s, beyond: 10 s)
#    and push (WebSocket). Requests are counted at the server from
#    waitroom's access log (one line per request; there is no request
#    counter metric), push messages from waitroom_push_messages_total.
#
# Every step is bounded in count and time; loopback only.
#
# Knobs (environment): VISITORS (1500), WORKERS (8), SERVICE (20ms), JITTER
# (200ms), WAITERS (5000), WINDOW (30s), MODES (flat5,flat1,tiered,push),
# NOFILE (65536), KEEP=1 (keep the work directory with logs and the JSON
# results), COMMIT.
set -euo pipefail

cd "$(dirname "$0")/.."
VISITORS=${VISITORS:-1500}
WORKERS=${WORKERS:-8}
SERVICE=${SERVICE:-20ms}
JITTER=${JITTER:-200ms}
WAITERS=${WAITERS:-5000}
WINDOW=${WINDOW:-30s}
MODES=${MODES:-flat5,flat1,tiered,push}
NOFILE=${NOFILE:-65536}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench_seeds
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

# One socket per WebSocket waiter on each side: raise the limit for this
# shell and so for everything it starts, as far as the hard limit allows.
raise_nofile "$NOFILE" $((2 * WAITERS + 1000)) "$WAITERS waiters"

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/seedload" ./cmd/seedload

start_redis
checkout_port=$(free_port)
# Info level: the access log is how requests are counted at the server.
# Push limits off: every simulated visitor comes from 127.0.0.1.
start_waitroom --log-level info --push-per-ip 0 --max-conns 0 --max-conns-per-ip 0 \
	--upstream "http://127.0.0.1:$checkout_port" --protect '/checkout/*' --gate-room seeds

describe_machine

echo
echo "== seedload herd: $VISITORS visitors a run, checkout $WORKERS x $SERVICE"
# seedload bounds each run (--run-timeout); timeout is a backstop.
timeout 10m "$work/seedload" herd --url "$base" --admin-token "$ADMIN_TOKEN" --room seeds \
	--checkout-addr "127.0.0.1:$checkout_port" --visitors "$VISITORS" \
	--workers "$WORKERS" --service "$SERVICE" --b-jitter "$JITTER" \
	>"$work/herd.out" 2> >(tee "$work/herd.log" >&2) || {
	cat "$work/herd.out"
	echo "bench_seeds: seedload herd failed" >&2
	exit 1
}

echo "== seedload polling: $WAITERS waiters, $WINDOW a mode ($MODES)"
timeout 15m "$work/seedload" polling --url "$base" --admin-token "$ADMIN_TOKEN" --room seeds-poll \
	--visitors "$WAITERS" --window "$WINDOW" --modes "$MODES" --enterers 100 \
	--access-log "$work/waitroom.log" --redis-addr "127.0.0.1:$redis_port" --server-pid "$waitroom_pid" \
	>"$work/polling.out" 2> >(tee "$work/polling.log" >&2) || {
	cat "$work/polling.out"
	echo "bench_seeds: seedload polling failed" >&2
	exit 1
}
echo "busy after the run (other processes, 3s): $(busy) of all cores"

echo
echo "== the seed's tables, waitroom beside them (one run)"
echo
head -n -1 "$work/herd.out"
echo
head -n -1 "$work/polling.out"
if grep -q 'level=\(WARN\|ERROR\)' "$work/waitroom.log"; then
	echo
	echo "== waitroom log (warnings and errors, last 20)"
	grep 'level=\(WARN\|ERROR\)' "$work/waitroom.log" | tail -n 20
fi
echo
echo "== JSON"
tail -n 1 "$work/herd.out"
tail -n 1 "$work/polling.out"
