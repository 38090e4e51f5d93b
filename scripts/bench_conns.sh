#!/usr/bin/env bash
# bench_conns.sh: honest request latency while one address holds
# connections. For each scenario it starts a throwaway redis-server and the
# built waitroom on free loopback ports, then cmd/connload: the attacker
# address (127.0.0.5) opens and holds up to HOLD connections (re-opening
# those the server closes, at most RATE a second), and after SETTLE the
# honest address (127.0.0.2) sends HONEST_RATE requests a second to
# GET /readyz (it pings Redis), each on a new connection, for DURATION. It
# prints connload's JSON, the room's admitter lease gauge after the run and
# the "too many open files" lines in the server's log.
#
#   WAITROOM_BIN=path   a waitroom binary to measure instead of this tree's
#                       (e.g. one built before the per-address cap)
#   SCENARIOS="name|waitroom flags|connload flags;..."  default below
#
# Bounded: each connload run stops after SETTLE + DURATION (at most 5 min,
# enforced by connload); timeout is a backstop.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_NAME=conns
ADMIN_TOKEN=${ADMIN_TOKEN:-bench-conns-admin-token-0123456789}
HOLD=${HOLD:-19000}
RATE=${RATE:-2000}
SETTLE=${SETTLE:-15s}
DURATION=${DURATION:-20s}
HONEST_RATE=${HONEST_RATE:-20}
SCENARIOS=${SCENARIOS:-"no attacker||--hold 0;idle connections||--mode idle;silent connections||--mode silent"}
source scripts/bench_lib.sh

if [[ -n ${WAITROOM_BIN:-} ]]; then
	cp "$WAITROOM_BIN" "$work/waitroom"
	COMMIT=${COMMIT:-"$WAITROOM_BIN"}
else
	go build -o "$work/waitroom" ./cmd/waitroom
fi
go build -o "$work/connload" ./cmd/connload
describe_machine

IFS=';' read -ra scenarios <<<"$SCENARIOS"
for sc in "${scenarios[@]}"; do
	IFS='|' read -r name wflags cflags <<<"$sc"
	echo "== $name (waitroom ${wflags:-defaults}; connload --hold $HOLD --rate $RATE $cflags)"
	rm -rf "$work/data"
	start_redis
	# shellcheck disable=SC2086
	start_waitroom --log-format json $wflags
	curl -sf -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"bot_protection":{"proof_of_work":"off"}}' \
		"$base/admin/api/rooms/sale" >/dev/null
	WAIT_TRIES=50 wait_for sh -c "curl -sf '$base/metrics' | grep -q '^waitroom_admitter_leases 1'"
	# shellcheck disable=SC2086
	timeout 330 "$work/connload" --url "$base" --path /readyz --hold "$HOLD" --rate "$RATE" --settle "$SETTLE" \
		--duration "$DURATION" --honest-rate "$HONEST_RATE" $cflags || echo "connload: exit $?"
	echo "admitter leases after: $(curl -s --max-time 10 "$base/metrics" | awk '/^waitroom_admitter_leases /{print $2}')"
	echo "\"too many open files\" log lines: $(grep -c 'too many open files' "$work/waitroom.log" || true)"
	echo "lease warnings: $(grep -c 'another server took over\|"admission: lease"' "$work/waitroom.log" || true)"
	kill "$waitroom_pid" "$redis_pid" 2>/dev/null || true
	wait "$waitroom_pid" "$redis_pid" 2>/dev/null || true
	waitroom_pid="" redis_pid=""
done
