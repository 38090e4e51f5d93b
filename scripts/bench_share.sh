#!/usr/bin/env bash
# bench_share.sh: the share of a room one attacker address takes against
# honest visitors (docs/benchmarks.md, "The attacker's share"). It starts a
# fresh redis-server and the built waitroom on free loopback ports, creates
# the room, and runs cmd/shareload twice at once: the attacker from
# 127.0.0.2 pinned to ATTACKER_CPUS (its places solved on CORES goroutines,
# WORKERS at once, kept alive while they wait; a squatter that never comes
# to checkout), and honest
# visitors arriving at RATE a second from ADDRS addresses 127.0.0.3, ...,
# each solving its own challenge on one goroutine, pinned with the server
# and Redis to HONEST_CPUS. It stops everything it started.
#
# Knobs (environment): SCENARIO (default: the room's default settings;
# prequeue: a scheduled opening PREQUEUE seconds after the start), DURATION
# (seconds the attacker takes places and honest visitors arrive; default
# 120, or PREQUEUE + 60), PREQUEUE (90), RATE (1), ADDRS (200), WORKERS (2),
# CORES (1), ATTACKER_CPUS (1), HONEST_CPUS (0), SETTLE (60), HOLD (30),
# SETTINGS (extra room settings JSON members, e.g. '"capacity": 20'),
# KEEP=1 (keep the work directory: shareload's JSON lines are there).
set -euo pipefail

cd "$(dirname "$0")/.."
SCENARIO=${SCENARIO:-default}
PREQUEUE=${PREQUEUE:-90}
RATE=${RATE:-1} ADDRS=${ADDRS:-200} WORKERS=${WORKERS:-2} CORES=${CORES:-1}
ATTACKER_CPUS=${ATTACKER_CPUS:-1} HONEST_CPUS=${HONEST_CPUS:-0}
SETTLE=${SETTLE:-60} HOLD=${HOLD:-30}
ADMIN_TOKEN=$(openssl rand -hex 16)
case $SCENARIO in
default) DURATION=${DURATION:-120} ;;
prequeue) DURATION=${DURATION:-$((PREQUEUE + 60))} ;;
*) echo "bench_share: SCENARIO $SCENARIO: want default or prequeue" >&2; exit 2 ;;
esac

BENCH_NAME=bench_share
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/shareload" ./cmd/shareload

# Everything this script starts from here runs on HONEST_CPUS, but the attacker.
taskset -pc "$HONEST_CPUS" $$ >/dev/null
start_redis
start_waitroom
describe_machine

settings="{${SETTINGS:-}}"
if [[ $SCENARIO == prequeue ]]; then
	opens=$(date -u -d "+$PREQUEUE seconds" +%Y-%m-%dT%H:%M:%SZ)
	settings="{\"opens_at\": \"$opens\"${SETTINGS:+, $SETTINGS}}"
fi
echo "== room: $settings"
curl -sf -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
	-d "$settings" "$base/admin/api/rooms/share" >/dev/null

echo "== $SCENARIO: attacker 127.0.0.2 on cpus $ATTACKER_CPUS ($WORKERS at once x $CORES cores), honest $RATE/s from $ADDRS addresses on cpus $HONEST_CPUS, ${DURATION}s"
taskset -c "$ATTACKER_CPUS" timeout $((DURATION + 60)) "$work/shareload" --role attacker --url "$base" --room share \
	--addr 127.0.0.2 --workers "$WORKERS" --cores "$CORES" --duration "${DURATION}s" --json >"$work/attacker.json" &
attacker_pid=$!
timeout $((DURATION + SETTLE + 120)) "$work/shareload" --role honest --url "$base" --room share --admin-token "$ADMIN_TOKEN" \
	--addr 127.0.0.3 --addrs "$ADDRS" --rate "$RATE" --duration "${DURATION}s" --settle "${SETTLE}s" --hold "${HOLD}s" \
	--json >"$work/honest.json"
wait "$attacker_pid"
echo "== redis: $(redis-cli -p "$redis_port" info commandstats | grep -c calls) commands kinds used; waitroom log lines: $(wc -l <"$work/waitroom.log")"
