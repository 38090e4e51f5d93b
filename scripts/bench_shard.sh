#!/usr/bin/env bash
# bench_shard.sh: what one Redis shard carries for one room (docs/scaling.md).
# It starts a fresh redis-server and one waitroom on free loopback ports and
# measures, each step bounded in time and count:
#
#  1. enters: cmd/loadgen in open loop (fresh visitors, proof of work off) at
#     each of RATES per second for STEP, until p99 passes P99_LIMIT_MS or
#     requests go unsent; for each rate the Redis time per enter (INFO
#     commandstats: usec of the scripts over the enters, wall time, which a
#     busy machine inflates) and Redis CPU (user+sys seconds per enter).
#  2. waiters held: Redis memory per waiting ticket (used_memory over the
#     line the enter steps left).
#  3. admissions: the room then admits ADMIT_BATCH every ADMIT_INTERVAL_MS out
#     of that line for ADMIT_FOR; admitted per second and Redis time per
#     admission (the tick script's usec over the admitted count).
#
# The load generator and waitroom share this 2-core machine with Redis, so
# the enters' p99 breaks at waitroom's CPU, not Redis's: the Redis time per
# operation is what says how far one shard goes (one core / that time).
#
# Knobs (environment): RATES (250 500 1000 2000 4000 8000 12000 16000), STEP
# (10s), P99_LIMIT_MS (50), CONCURRENCY (200), ADMIT_BATCH (10000),
# ADMIT_INTERVAL_MS (200), ADMIT_FOR (5: seconds), KEEP=1, COMMIT.
set -euo pipefail

cd "$(dirname "$0")/.."
RATES=${RATES:-250 500 1000 2000 4000 8000 12000 16000}
STEP=${STEP:-10s}
P99_LIMIT_MS=${P99_LIMIT_MS:-50}
CONCURRENCY=${CONCURRENCY:-200}
ADMIT_BATCH=${ADMIT_BATCH:-10000}
ADMIT_INTERVAL_MS=${ADMIT_INTERVAL_MS:-200}
ADMIT_FOR=${ADMIT_FOR:-5}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less
ROOM=shard

BENCH_NAME=bench_shard
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/loadgen" ./cmd/loadgen
start_redis
start_waitroom
if [[ -z ${COMMIT:-} ]]; then
	COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	git diff --quiet HEAD -- . 2>/dev/null || COMMIT="$COMMIT (with uncommitted changes)"
fi
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit: $COMMIT; $(nproc) cpus; load $(cut -d' ' -f1-3 /proc/loadavg); $(redis-server --version | cut -d' ' -f1-3)"

# info FIELD... prints the fields of INFO ALL, in order, one line; a
# commandstats field is cmdstat_NAME.calls or cmdstat_NAME.usec.
info() {
	redis-cli -p "$redis_port" info all | tr -d '\r' | awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		/^cmdstat_/ { split($0, a, ":"); m = split(a[2], kv, ","); for (i = 1; i <= m; i++) { split(kv[i], p, "="); v[a[1] "." p[1]] = p[2] } next }
		/:/ { split($0, a, ":"); v[a[1]] = a[2] }
		END { for (i = 1; i <= n; i++) printf "%s ", (w[i] in v ? v[w[i]] : 0); print "" }'
}
fields="cmdstat_incr.calls cmdstat_fcall.calls cmdstat_fcall.usec used_cpu_user used_cpu_sys used_memory total_commands_processed"

# A room that keeps its line: one admission a minute, nobody abandons.
settings='{"capacity":1000000,"batch_size":1,"batch_interval_ms":60000,"jitter_ms":0,"session_ttl_s":3600,"abandon_after_s":3600,"bot_protection":{"proof_of_work":"off"}}'
curl -sf -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
	-d "$settings" "$base/admin/api/rooms/$ROOM" >/dev/null
mem0=$(info used_memory)

echo
echo "== 1. enters, open loop, $STEP per rate (p99 limit ${P99_LIMIT_MS} ms)"
printf '%8s %8s %8s %8s %8s %7s %12s %12s %10s %12s\n' offered served p50_ms p99_ms max_ms unsent redis_us/ent cmds/enter redis_cores cpu_us/enter
for rate in $RATES; do
	read -r i0 e0 u0 cu0 cs0 _ t0 <<<"$(info $fields)"
	s0=$(date +%s.%N)
	timeout 120 "$work/loadgen" --url "$base" --room "$ROOM" --mode enter --fresh --rate "$rate" \
		--concurrency "$CONCURRENCY" --duration "$STEP" --warmup 0s --requests $((rate * ${STEP%s} + 1)) --json \
		>"$work/enter-$rate.json" 2>"$work/enter-$rate.log" || true
	s1=$(date +%s.%N)
	read -r i1 e1 u1 cu1 cs1 _ t1 <<<"$(info $fields)"
	jq -r --arg i "$((i1 - i0))" --arg u "$((u1 - u0))" --arg t "$((t1 - t0))" \
		--arg cpu "$(echo "$cu0 $cs0 $cu1 $cs1 $s0 $s1" | awk '{printf "%.2f", ($3 + $4 - $1 - $2) / ($6 - $5)}')" \
		--arg cpus "$(echo "$cu0 $cs0 $cu1 $cs1" | awk '{printf "%.6f", $3 + $4 - $1 - $2}')" \
		'.ops.enter as $o | [.rate, ($o.ok_rps | floor), $o.p50_ms, $o.p99_ms, $o.max_ms, (.unsent // 0),
		 (($u | tonumber) / ([($i | tonumber), 1] | max) * 10 | round / 10), (($t | tonumber) / ([($i | tonumber), 1] | max) * 10 | round / 10), $cpu,
		 (($cpus | tonumber) * 1e6 / ([($i | tonumber), 1] | max) * 10 | round / 10)] | @tsv' \
		"$work/enter-$rate.json" | awk -F'\t' '{printf "%8s %8s %8s %8s %8s %7s %12s %12s %10s %12s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}'
	p99=$(jq -r '.ops.enter.p99_ms' "$work/enter-$rate.json")
	unsent=$(jq -r '.unsent // 0' "$work/enter-$rate.json")
	if awk -v p="$p99" -v l="$P99_LIMIT_MS" 'BEGIN { exit !(p > l) }' || ((unsent > 0)); then
		echo "p99 broke at $rate/s offered: stopping the sweep"
		break
	fi
done

echo
echo "== 2. waiters held"
stats=$(curl -sf -H "Authorization: Bearer $ADMIN_TOKEN" "$base/admin/api/rooms/$ROOM/stats")
waiting=$(jq -r .waiting <<<"$stats")
mem1=$(info used_memory)
echo "waiting $waiting; Redis used_memory $((mem0 >> 20)) -> $((mem1 >> 20)) MiB: $(((mem1 - mem0) / (waiting > 0 ? waiting : 1))) B per waiting ticket"

echo
echo "== 3. admissions: $ADMIT_BATCH every $ADMIT_INTERVAL_MS ms for ${ADMIT_FOR}s"
read -r _ e0 u0 cu0 cs0 _ _ <<<"$(info $fields)"
a0=$(jq -r .admitted_total <<<"$stats")
s0=$(date +%s.%N)
curl -sf -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
	-d "$(jq -c ".batch_size = $ADMIT_BATCH | .batch_interval_ms = $ADMIT_INTERVAL_MS" <<<"$settings")" \
	"$base/admin/api/rooms/$ROOM" >/dev/null
sleep "$ADMIT_FOR"
curl -sf -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
	-d "$(jq -c '.paused = true' <<<"$settings")" "$base/admin/api/rooms/$ROOM" >/dev/null
s1=$(date +%s.%N)
read -r _ e1 u1 cu1 cs1 _ _ <<<"$(info $fields)"
a1=$(curl -sf -H "Authorization: Bearer $ADMIN_TOKEN" "$base/admin/api/rooms/$ROOM/stats" | jq -r .admitted_total)
echo "$a0 $a1 $e0 $e1 $u0 $u1 $cu0 $cs0 $cu1 $cs1 $s0 $s1" | awk '{
	n = $2 - $1; t = $12 - $11
	printf "admitted %d in %.1fs: %.0f/s (configured %d/s); script calls %d, %.1f ms of Redis script time: %.2f us per admission; Redis CPU %.2f cores\n",
		n, t, n / t, '"$ADMIT_BATCH"' * 1000 / '"$ADMIT_INTERVAL_MS"', $4 - $3, ($6 - $5) / 1000, ($6 - $5) / (n > 0 ? n : 1), ($9 + $10 - $7 - $8) / t }'
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
