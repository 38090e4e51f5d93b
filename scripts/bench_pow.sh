#!/usr/bin/env bash
# bench_pow.sh: what proof of work does to a scripted attacker, end to end on
# this machine (docs/benchmarks.md, "Proof of work"). It starts a fresh
# redis-server and waitroom on free loopback ports and runs cmd/loadgen as
# the attacker: fresh visitors, each solving its challenge with the Go solver
# on every core, against a room at the default cost, for DURATION. Then one
# honest visitor (one core, the same solver) enters behind it and reports its
# place. It stops everything it started.
#
# Knobs (environment): DURATION (30s), CONCURRENCY (2: attackers at once),
# FLOOD_ONLY=1 (only the script that does not solve), KEEP=1 (keep the work
# directory).
set -euo pipefail

cd "$(dirname "$0")/.."
DURATION=${DURATION:-30s}
CONCURRENCY=${CONCURRENCY:-2}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench_pow WAIT_TRIES=300
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

start_redis

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/loadgen" ./cmd/loadgen

start_waitroom

describe_machine

# cpu_s: the CPU seconds (user + system) the waitroom process has used.
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$waitroom_pid/stat"
}

if [[ ${FLOOD_ONLY:-0} != 1 ]]; then
echo
echo "== attacker: $CONCURRENCY at once, each solution on $(nproc) cores, $DURATION, default cost"
timeout 600 "$work/loadgen" --url "$base" --admin-token "$ADMIN_TOKEN" --room powbench --reset \
	--solve --concurrency "$CONCURRENCY" --requests 1000000 --warmup 0 --duration "$DURATION" --json \
	>"$work/attack.json" 2>"$work/attack.txt"
cat "$work/attack.txt"
cat "$work/attack.json"

echo
echo "== an honest visitor arrives (one core)"
timeout 120 "$work/loadgen" --url "$base" --admin-token "$ADMIN_TOKEN" --room powbench \
	--solve --solve-cores 1 --concurrency 1 --requests 1 --warmup 0 --duration 60s --json \
	>"$work/honest.json" 2>"$work/honest.txt"
cat "$work/honest.txt"
# Everyone waits (one slot, a tick a minute), so the newcomer is last in line.
echo "honest visitor's place: $(sed -n 's/.*"waiting_after":\([0-9]*\).*/\1/p' "$work/honest.json")"
else
curl -sf -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
	-d '{"bot_protection": {"proof_of_work": "on"}}' "$base/admin/api/rooms/powbench" >/dev/null
fi

echo
echo "== a script that does not solve: fresh visitors, 10s (every answer is a refusal: a new challenge, or 503 when none is ready)"
cpu0=$(cpu_s)
start=$(date +%s.%N)
timeout 120 "$work/loadgen" --url "$base" --room powbench --concurrency 50 --requests 1000000 \
	--warmup 1s --duration 10s --json >"$work/flood.json" 2>"$work/flood.txt"
cat "$work/flood.txt"
echo "waitroom CPU during the flood: $(awk -v a="$cpu0" -v b="$(cpu_s)" -v t0="$start" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.2f s over %.1f s wall: %.2f cores", b - a, t1 - t0, (b - a) / (t1 - t0) }')"
echo "places in line after the flood: $(redis-cli -p "$redis_port" --no-raw zcard '{powbench}:q' | tr -dc 0-9)"
