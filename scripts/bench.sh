#!/usr/bin/env bash
# bench.sh: the load-path benchmark of docs/benchmarks.md, end to end on this
# machine. It starts a fresh redis-server and waitroom on free loopback ports,
# runs redis-benchmark against that Redis, then cmd/loadgen against waitroom,
# then the queue package's Go benchmarks, and stops everything it started.
# Every step is bounded in requests and time.
#
# Knobs (environment): DURATION (10s), WARMUP (2s), CONCURRENCY (200),
# REQUESTS (1000000 per run), ENTER_RATES ("5000 7500 10000") and
# STATUS_RATES ("10000 15000 20000"): the open-loop runs, RB_N (200000
# redis-benchmark requests per test),
# PROFILE=1 (perf-record the server during the status run), KEEP=1 (keep the
# work directory with the JSON results and logs), COMMIT (what to call the
# code under test when it is not a git checkout).
set -euo pipefail

cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONCURRENCY=${CONCURRENCY:-200}
REQUESTS=${REQUESTS:-1000000}
ENTER_RATES=${ENTER_RATES:-5000 7500 10000}
STATUS_RATES=${STATUS_RATES:-10000 15000 20000}
RB_N=${RB_N:-200000}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

proc_cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$1/stat"; } # user+sys seconds (USER_HZ=100)

start_redis
rcli() { redis-cli -p "$redis_port" "$@"; }

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/loadgen" ./cmd/loadgen

start_waitroom

describe_machine

echo
echo "== redis-benchmark on the same Redis (-c $CONCURRENCY, no pipelining)"
# -q still draws a progress line with carriage returns; keep the results.
rbench() {
	timeout 300 redis-benchmark -h 127.0.0.1 -p "$redis_port" -q -n "$RB_N" -c "$CONCURRENCY" -P 1 "$@" |
		tr '\r' '\n' | grep 'requests per second'
}
rbench -t set,get,incr,zadd
sha=$(rcli script load "return 1")
rbench evalsha "$sha" 0 | sed "s/^evalsha $sha 0/EVALSHA (return 1)/"
rcli flushall >/dev/null

# run NAME LOADGEN-ARGS...: one loadgen run. Beside its report it prints the
# CPU each process spent per request (every API call is one EVALSHA, so
# Redis's call count is the request count, setup and warmup included): on a
# shared machine CPU per request is steadier than requests per second.
run() {
	local name=$1
	shift
	echo
	echo "== $name"
	rcli config resetstat >/dev/null
	local w0 r0 w1 r1
	w0=$(proc_cpu "$waitroom_pid") r0=$(proc_cpu "$redis_pid")
	local TIMEFORMAT="%U %S"
	{ time timeout 300 "$work/loadgen" --url "$base" --admin-token "$ADMIN_TOKEN" --concurrency "$CONCURRENCY" \
		--requests "$REQUESTS" --duration "$DURATION" --warmup "$WARMUP" --json "$@" \
		>"$work/$name.json" 2>"$work/$name.txt"; } 2>"$work/$name.time" || {
		cat "$work/$name.txt" "$work/$name.time"
		return 1
	}
	w1=$(proc_cpu "$waitroom_pid") r1=$(proc_cpu "$redis_pid")
	cat "$work/$name.txt"
	rcli info commandstats | tr -d '\r' | awk -F'[:,=]' -v w0="$w0" -v w1="$w1" -v r0="$r0" -v r1="$r1" \
		-v lg="$(cat "$work/$name.time")" '/^cmdstat_fcall:/ {
			split(lg, t, " "); n = $3
			printf "   CPU per request (%d requests): waitroom %.0f us, redis-server %.0f us (%.1f us inside scripts), loadgen %.0f us\n",
				n, (w1 - w0) * 1e6 / n, (r1 - r0) * 1e6 / n, $7, (t[1] + t[2]) * 1e6 / n
		}'
}

runs=(enter-closed)
run enter-closed --mode enter --reset
for rate in $ENTER_RATES; do
	runs+=("enter-open-$rate")
	run "enter-open-$rate" --mode enter --rate "$rate"
done
runs+=(status-closed)
run status-closed --mode status --visitors 1000 &
status_job=$!
if [[ ${PROFILE:-0} == 1 ]]; then
	sleep 3
	timeout 60 perf record -F 499 -g -p "$waitroom_pid" -o "$work/waitroom.perf" -- sleep 5 >/dev/null 2>&1 || echo "   (perf record failed)"
fi
wait "$status_job"
for rate in $STATUS_RATES; do
	runs+=("status-open-$rate")
	run "status-open-$rate" --mode status --visitors 1000 --rate "$rate"
done
runs+=(mixed-closed)
run mixed-closed --mode mixed --status-every 4

if [[ ${PROFILE:-0} == 1 && -f $work/waitroom.perf ]]; then
	perf report -i "$work/waitroom.perf" --stdio --children --sort sym -g none 2>/dev/null |
		grep -E '^ +[0-9]' | head -40 >"$work/waitroom.perf.txt" || true
	echo
	echo "== waitroom CPU during status-closed (perf, inclusive)"
	cat "$work/waitroom.perf.txt"
fi

# Free the CPU for the Go benchmarks, which start their own redis-server.
kill "$waitroom_pid" "$redis_pid"
wait "$waitroom_pid" "$redis_pid" 2>/dev/null || true
waitroom_pid="" redis_pid=""

echo
echo "== go test -bench (queue, own redis-server)"
go test -run '^$' -bench 'Tick100k' -benchtime 2000x -count 1 -timeout 10m ./queue/ | grep -E '^(Benchmark|ok|FAIL|---)|bench_test'
go test -run '^$' -bench 'Enter|Status' -benchtime 3s -count 1 -timeout 10m ./queue/ | grep -E '^(Benchmark|ok|FAIL|---)'

echo
echo "busy after the run (other processes, 3s): $(busy) of all cores"
echo
echo "== summary (measured phase only)"
printf '%-22s %8s %8s %8s %8s %8s %s\n' run req/s p50_ms p90_ms p99_ms max_ms errors
for f in "${runs[@]}"; do
	jq -r --arg n "$f" '. as $r | .ops | to_entries[] |
		[($n + (if .key == ($n|split("-")[0]) then "" else "/" + .key end)), (.value.rps|floor), .value.p50_ms, .value.p90_ms, .value.p99_ms, .value.max_ms,
		 ((.value.errors // {}) + (if ($r.unsent // 0) > 0 then {unsent: $r.unsent} else {} end) |
		  to_entries | map("\(.key)=\(.value)") | join(",") | if . == "" then "-" else . end)] | @tsv' "$work/$f.json" |
		awk -F'\t' '{printf "%-22s %8s %8s %8s %8s %8s %s\n", $1, $2, $3, $4, $5, $6, $7}'
done
