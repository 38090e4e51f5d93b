#!/usr/bin/env bash
# bench_100k.sh: one room, a crowd of WebSocket waiters spread over several
# waitroom servers sharing one redis-server, on this machine (docs/benchmarks.md,
# "Issue 13: 100,000 waiters"). Two parts:
#
#  1. The crowd: SERVERS waitroom processes, CLIENTS cmd/wsload processes
#     holding the crowd together, measured at each of STAGES open sockets (one
#     ramp; at each stage a settle and a WINDOW): Redis commands per waiter per
#     second (INFO commandstats deltas), Redis CPU (user+sys seconds per
#     second), the servers' RSS and Go heap per socket (/proc and /metrics),
#     update lateness p99 against the tier interval, admission heard p99.
#  2. The pace (PACE=1): PACE_SERVERS servers, PACE_CONNS waiters, one client;
#     admissions counted in sliding one-second windows from the admission
#     times the clients heard, against the configured rate; one server is
#     killed (SIGKILL) halfway through the window and its waiters reconnect
#     to the others.
#
# Proof of work is off for the room (wsload sets it so): the ramp measures the
# line and the sockets, not the visitors' puzzles.
#
# One process may hold at most its open-file limit of sockets, and here the
# hard limit cannot be raised (no CAP_SYS_RESOURCE): the crowd is split over
# enough servers and clients that each stays under it (the defaults do for
# 100,000 under 20,000 files). Every step is bounded: ramps by RAMP_TIMEOUT,
# windows by WINDOW, every process by timeout; only loopback addresses.
# Durations are in seconds ("30s").
#
# Knobs (environment): STAGES (10000,50000,100000), SERVERS (auto: at least
# 4), CLIENTS (auto), WINDOW (30s), SETTLE (5s), RAMP_TIMEOUT (300s per
# stage), CONCURRENCY (200 entering at once, over all clients), BATCH_SIZE
# (10) and BATCH_INTERVAL (200ms): the pace, SOURCES (1: client source
# addresses 127.0.0.1..N; a bound source address takes a port of its own
# ~28,000 whatever the destination, while an unbound one shares ports across
# the servers' distinct ports, so more servers beat more sources), PACE (1), PACE_SERVERS (4), PACE_CONNS (2000),
# PACE_WINDOW (60s), CROWD (1: run part 1), NICE (0: the niceness of the
# servers and clients; a negative one puts this bounded run ahead of other
# tenants' work, so that it measures waitroom rather than the machine),
# DEGRADE_AFTER (1s, the servers' default: how long Redis calls must keep
# timing out before a server switches to degraded mode; a machine other
# tenants saturate starves the servers for longer than that), KEEP=1 (keep logs and JSON), COMMIT, PORT_LOW and PORT_SPAN (the listeners' ports:
# [PORT_LOW, PORT_LOW+PORT_SPAN), default 10000 up to the ephemeral range).
set -euo pipefail

cd "$(dirname "$0")/.."
STAGES=${STAGES:-10000,50000,100000}
WINDOW=${WINDOW:-30s}
SETTLE=${SETTLE:-5s}
RAMP_TIMEOUT=${RAMP_TIMEOUT:-300s}
CONCURRENCY=${CONCURRENCY:-200}
BATCH_SIZE=${BATCH_SIZE:-10}
BATCH_INTERVAL=${BATCH_INTERVAL:-200ms}
SOURCES=${SOURCES:-1}
CROWD=${CROWD:-1}
PACE=${PACE:-1}
PACE_SERVERS=${PACE_SERVERS:-4}
PACE_CONNS=${PACE_CONNS:-2000}
PACE_WINDOW=${PACE_WINDOW:-60s}
NICE=${NICE:-0}
DEGRADE_AFTER=${DEGRADE_AFTER:-1s}
ADMIN_TOKEN=$(openssl rand -hex 16) # 128 bits: waitroom refuses less

BENCH_NAME=bench_100k
# shellcheck source=scripts/bench_lib.sh
source scripts/bench_lib.sh

# As high as the hard limit allows; raising the hard limit needs
# CAP_SYS_RESOURCE, which a container may lack.
ulimit -Hn 1048576 2>/dev/null || true
ulimit -n "$(ulimit -Hn)"
nofile=$(ulimit -n)
# Per process: sockets of its share of the crowd, plus room for Redis pools,
# the clients' keep-alive enter connections, logs and the like.
per_proc=$((nofile - 3000))
if ((per_proc < 1000)); then
	echo "bench_100k: open-file limit $nofile is too low" >&2
	exit 1
fi
top=${STAGES##*,}
SERVERS=${SERVERS:-$(((top + per_proc - 1) / per_proc > 4 ? (top + per_proc - 1) / per_proc : 4))}
CLIENTS=${CLIENTS:-$(((top + per_proc - 1) / per_proc))}
if ((top / SERVERS > per_proc || top / CLIENTS > per_proc)); then
	echo "bench_100k: $top sockets over $SERVERS servers and $CLIENTS clients exceed $per_proc per process (open-file limit $nofile)" >&2
	exit 1
fi
if ((CONCURRENCY < CLIENTS)); then
	CONCURRENCY=$CLIENTS
fi

# Listeners below the ephemeral range: the clients' sockets come and go there.
# PORT_LOW and PORT_SPAN narrow the range (a shared machine's share of ports).
free_port() {
	local p lo span
	lo=${PORT_LOW:-10000}
	span=${PORT_SPAN:-$(($(cut -f1 /proc/sys/net/ipv4/ip_local_port_range) - lo))}
	for _ in $(seq 50); do
		p=$((lo + RANDOM % span))
		if [[ -z $(ss -Htan "sport = :$p") ]]; then
			echo "$p"
			return
		fi
	done
	echo "bench_100k: no free port found" >&2
	return 1
}

echo "== building"
go build -o "$work/waitroom" ./cmd/waitroom
go build -o "$work/wsload" ./cmd/wsload

describe_machine
echo "nice:   servers and clients $NICE, redis-server -10; servers --degrade-after $DEGRADE_AFTER"

"$work/waitroom" --create-signing-key --signing-key "$work/signing-key.pem" >/dev/null 2>&1

# start_servers N PART starts N waitroom processes on the one Redis, each with
# its own port and data directory (the outbox is per server; fresh per PART:
# a server restores the rooms of its directory's snapshot into a flushed
# Redis) and the shared signing key: $urls (comma-separated), $pids
# (comma-separated), and every pid in $waitroom_pid for the cleanup.
start_servers() {
	local n=$1 part=$2 i port
	urls="" pids=""
	for i in $(seq "$n"); do
		port=$(free_port)
		mkdir -p "$work/$part$i"
		nice -n "$NICE" "$work/waitroom" --redis-url "redis://127.0.0.1:$redis_port/0" --admin-token "$ADMIN_TOKEN" \
			--signing-key "$work/signing-key.pem" --kafka-brokers embedded --addr "127.0.0.1:$port" \
			--data-dir "$work/$part$i" --log-level warn --push-per-ip 0 --max-conns 0 --max-conns-per-ip 0 --degrade-after "$DEGRADE_AFTER" \
			>"$work/waitroom$i.log" 2>&1 &
		waitroom_pid="$waitroom_pid $!"
		pids="$pids${pids:+,}$!"
		urls="$urls${urls:+,}http://127.0.0.1:$port"
		wait_for curl -sf "http://127.0.0.1:$port/healthz"
	done
}

# stop_servers stops what start_servers started: SIGTERM, and SIGKILL
# after 10 s (the in-process Kafka broker's Close was seen to hang for
# minutes after a crowd).
stop_servers() {
	local pid
	for pid in ${pids//,/ }; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in ${pids//,/ }; do
		# Gone, or a zombie waiting for the wait below.
		WAIT_TRIES=100 wait_for eval "[[ ! -e /proc/$pid ]] || grep -q ') Z' /proc/$pid/stat" ||
			kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	waitroom_pid=""
}

# rotate prints a comma list starting at its k-th element, so each client
# begins its round robin at a different server.
rotate() {
	local -a a
	IFS=, read -ra a <<<"$1"
	local k=$(($2 % ${#a[@]}))
	local out=("${a[@]:k}" "${a[@]:0:k}")
	(
		IFS=,
		echo "${out[*]}"
	)
}

# warnings prints the servers' warnings and errors, if any.
warnings() {
	local f
	for f in "$work"/waitroom*.log; do
		if grep -qvE '^\s*$' "$f"; then
			echo "== $(basename "$f") (warnings and errors, last 10 lines)"
			tail -n 10 "$f"
		fi
	done
}

start_redis
# waitroom fails fast (a Redis call times out after 500 ms and the servers
# switch to degraded mode): on a machine other tenants keep busy, the one
# redis-server is put ahead of them so that the run measures waitroom, not
# the neighbours' builds. It uses a small share of one core.
renice -n -10 -p "$redis_pid" >/dev/null 2>&1 || echo "bench_100k: could not raise redis-server's priority" >&2

# The clients too are stopped on exit.
cpids="" tailpid=""
trap 'for p in $cpids $tailpid; do kill "$p" 2>/dev/null || true; done; cleanup' EXIT

if [[ $CROWD == 1 ]]; then
	echo
	echo "== part 1, the crowd: stages $STAGES over $SERVERS servers and $CLIENTS clients; $WINDOW windows; pace $BATCH_SIZE every $BATCH_INTERVAL"
	start_servers "$SERVERS" crowd
	# Each client holds its share of every stage; the first one puts the room
	# and reads Redis and the servers, dividing its per-waiter and per-socket
	# figures by the clients' number (the others hold as many as it does).
	IFS=, read -ra st <<<"$STAGES"
	share=()
	for s in "${st[@]}"; do share+=($(((s + CLIENTS - 1) / CLIENTS))); done
	shares=$(
		IFS=,
		echo "${share[*]}"
	)
	nst=${#st[@]}
	bound=$((nst * (2 * ${RAMP_TIMEOUT%s} + ${SETTLE%s} + 2 * ${WINDOW%s} + 60 * SERVERS) + 120))
	# The clients start and end every window together (--barrier): none
	# ramps or closes its sockets inside another's window.
	mkdir -p "$work/barrier"
	for i in $(seq 0 $((CLIENTS - 1))); do
		lead=()
		if ((i == 0)); then
			lead=(--admin-token "$ADMIN_TOKEN" --server-pid "$pids" --redis-addr "127.0.0.1:$redis_port")
		fi
		timeout "${bound}s" nice -n "$NICE" "$work/wsload" --url "$(rotate "$urls" "$i")" --room crowd --peers "$CLIENTS" \
			--stages "$shares" --concurrency $((CONCURRENCY / CLIENTS)) --duration "$WINDOW" --settle "$SETTLE" \
			--ramp-timeout "$RAMP_TIMEOUT" --sources "$SOURCES" --batch-size "$BATCH_SIZE" \
			--batch-interval "$BATCH_INTERVAL" --rss-limit $((8 << 30)) --barrier "$work/barrier" "${lead[@]}" \
			>"$work/crowd$i.out" 2>"$work/crowd$i.log" &
		cpids="$cpids $!"
		if ((i == 0)); then
			# The others enter once the first has put the room.
			wait_for grep -q "opening" "$work/crowd0.log"
		fi
	done
	# The first client's progress, while all run.
	tail -f "$work/crowd0.log" &
	tailpid=$!
	failed=0
	for pid in $cpids; do
		wait "$pid" || failed=1
	done
	kill "$tailpid" 2>/dev/null || true
	cpids="" tailpid=""
	if ((failed)); then
		echo "bench_100k: a client failed; its log:" >&2
		tail -n 20 "$work"/crowd*.log >&2
	fi
	echo
	echo "== the first client's report (Redis and server figures for the whole crowd)"
	head -n -1 "$work/crowd0.out" || true
	tail -n 1 "$work/crowd0.out" >"$work/crowd0.json" || true
	echo
	echo "== every client, by stage: open at the window, lateness p99, admission p99 (ms)"
	for i in $(seq 0 $((CLIENTS - 1))); do
		tail -n 1 "$work/crowd$i.out" >"$work/crowd$i.json" || true
		jq -r --arg c "$i" 'if type == "array" then .[] else . end |
			"client \($c): stage \(.conns_target): open \(.open_at_window_start), waiting min \(.waiting_min); lateness p99 \(.lateness.p99_ms) (n \(.lateness.n)); admission p99 \(.admission.p99_ms) (n \(.admission.n))"' \
			"$work/crowd$i.json" 2>/dev/null || echo "client $i: no report"
	done
	echo
	echo "== crowd summary by stage (worst client's p99)"
	jq -rs 'map(if type == "array" then . else [.] end) | transpose[] |
		"stage \(map(.conns_target) | add) waiters: open \(map(.open_at_window_start) | add); lateness p99 worst \(map(.lateness.p99_ms) | max) ms; admission p99 worst \(map(.admission.p99_ms) | max) ms; Redis \(.[0].redis.commands_per_waiter_per_s // "?") commands/waiter/s, \(.[0].redis.cpu_cores_window // "?") cores; servers \(.[0].server.bytes_per_conn // "?") B RSS and \(.[0].server.go_bytes_per_conn // "?") B Go heap+stacks per socket"' \
		"$work"/crowd*.json 2>/dev/null || echo "(no complete reports)"
	warnings
	stop_servers
	redis-cli -p "$redis_port" flushall >/dev/null
fi

if [[ $PACE == 1 ]]; then
	echo
	echo "== part 2, the pace: $PACE_CONNS waiters over $PACE_SERVERS servers, $PACE_WINDOW window, one server killed halfway"
	start_servers "$PACE_SERVERS" pace
	victim=${pids##*,}
	win=${PACE_WINDOW%s}
	timeout $((${RAMP_TIMEOUT%s} + win + 60 * PACE_SERVERS + 120))s nice -n "$NICE" "$work/wsload" --url "$urls" --room pace \
		--admin-token "$ADMIN_TOKEN" --server-pid "$pids" --redis-addr "127.0.0.1:$redis_port" \
		--conns "$PACE_CONNS" --concurrency "$CONCURRENCY" --duration "$PACE_WINDOW" --settle "$SETTLE" \
		--ramp-timeout "$RAMP_TIMEOUT" --sources "$SOURCES" --batch-size "$BATCH_SIZE" \
		--batch-interval "$BATCH_INTERVAL" --kill-pid "$victim" --kill-after $((win / 2))s \
		>"$work/pace.out" 2> >(tee "$work/pace.log" >&2) || echo "bench_100k: the pace run failed" >&2
	head -n -1 "$work/pace.out" || true
	tail -n 1 "$work/pace.out" >"$work/pace.json" || true
	warnings
	stop_servers
fi

echo
echo "busy after (3s): $(busy) of all cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
