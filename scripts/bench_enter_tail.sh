#!/usr/bin/env bash
# bench_enter_tail.sh: enter's tail at CONCURRENCY (200) concurrent clients,
# seen from both sides (docs/benchmarks.md, "Enter's tail"). It starts a
# fresh redis-server and waitroom on free loopback ports, then RUNS (3)
# runs of cmd/loadgen --mode enter, each DURATION (10s) after WARMUP (2s),
# closed loop, or open loop at RATE enters a second when RATE is set, and
# prints per run the client's percentiles (loadgen: to the
# reply's last byte) and the server's own (its access log's duration_ms of
# each POST …/enter: from the request read to the reply written), so the
# time a request spends queued in the client and the kernel on a 2-core
# machine shared with the load generator shows apart from the server's.
# Every step is bounded in count and time; loopback only.
set -euo pipefail

cd "$(dirname "$0")/.."
CONCURRENCY=${CONCURRENCY:-200}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
RUNS=${RUNS:-3}
RATE=${RATE:-}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench_enter_tail
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/loadgen" ./cmd/loadgen

start_redis
# Info level in JSON: one access line per request with its duration_ms.
start_waitroom --log-level info --log-format json
describe_machine

# server_pcts FILE: p50, p90, p99 and max of the enters' duration_ms logged
# since line FROM of FILE.
server_pcts() {
	tail -n +"$2" "$1" | grep '"msg":"request"' | grep '"method":"POST"' | grep -E '"path":"/api/rooms/[^"]+/enter"' |
		sed -E 's/.*"duration_ms":([0-9.]+).*/\1/' | sort -n |
		awk '{v[NR] = $1} END {
			if (NR == 0) { print "   server: no enter lines"; exit }
			printf "   server (%d enters logged, warmup included): p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n",
				NR, v[int(NR * 0.50) + 1], v[int(NR * 0.90) + 1], v[int(NR * 0.99) + 1], v[NR]
		}'
}

for i in $(seq "$RUNS"); do
	echo
	loop=(--reset) what="closed loop"
	if [[ -n $RATE ]]; then loop=(--reset --rate "$RATE") what="open loop at $RATE/s"; fi
	echo "== run $i: enter, $what, $CONCURRENCY clients"
	from=$(($(wc -l <"$work/waitroom.log") + 1))
	timeout 120 "$work/loadgen" --url "$base" --admin-token "$ADMIN_TOKEN" --concurrency "$CONCURRENCY" \
		--requests 1000000 --duration "$DURATION" --warmup "$WARMUP" --mode enter "${loop[@]}" 2>&1 |
		grep -E 'req/s|p50|p99|errors' || true
	server_pcts "$work/waitroom.log" "$from"
done
