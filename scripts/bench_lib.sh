# bench_lib.sh: what the bench scripts share. Source it after setting
# BENCH_NAME (for messages and the work directory's name); it makes $work,
# stops on exit only the processes whose pids the script put in $redis_pid
# and $waitroom_pid, and removes $work unless KEEP=1.

work=$(mktemp -d "/tmp/waitroom-$BENCH_NAME.XXXXXX")
redis_pid="" waitroom_pid=""
cleanup() {
	for pid in $waitroom_pid $redis_pid; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $waitroom_pid $redis_pid; do
		wait "$pid" 2>/dev/null || true
	done
	if [[ ${KEEP:-0} == 1 ]]; then
		echo "results kept in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port picks a random port in [${PORT_LOW:-20000}, ${PORT_LOW}+${PORT_SPAN:-40000})
# that nothing listens on.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((${PORT_LOW:-20000} + RANDOM % ${PORT_SPAN:-40000}))
		if [[ -z $(ss -Hltn "sport = :$p") ]]; then
			echo "$p"
			return
		fi
	done
	echo "$BENCH_NAME: no free port found" >&2
	return 1
}

# wait_for runs a check every 0.1 s, ${WAIT_TRIES:-100} times at most.
wait_for() {
	for _ in $(seq "${WAIT_TRIES:-100}"); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	echo "$BENCH_NAME: gave up waiting for: $*" >&2
	return 1
}

# raise_nofile WANT NEED WHAT raises this shell's open-file limit, and so
# that of everything it starts, to WANT as far as the hard limit allows
# (raising the hard limit needs root), and stops when it is under NEED,
# saying it is too low for WHAT.
raise_nofile() {
	ulimit -Hn "$1" 2>/dev/null || true
	ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	if (($(ulimit -n) < $2)); then
		echo "$BENCH_NAME: open-file limit $(ulimit -n) is too low for $3" >&2
		exit 1
	fi
}

# bench_host is the loopback address the servers listen on (BENCH_HOST,
# default 127.0.0.1): a shared machine can give each user its own.
bench_host=${BENCH_HOST:-127.0.0.1}

# start_redis starts a throwaway redis-server on a free loopback port:
# $redis_port, $redis_pid.
start_redis() {
	redis_port=$(free_port)
	redis-server --port "$redis_port" --bind "$bench_host" --save "" --appendonly no \
		--dir "$work" --loglevel warning >"$work/redis.log" 2>&1 &
	redis_pid=$!
	wait_for redis-cli -h "$bench_host" -p "$redis_port" ping
}

# start_waitroom starts the built $work/waitroom on a free loopback port
# against that Redis, with any extra flags: $wr_port, $base, $waitroom_pid.
# A real Redis needs a signing key made beforehand and Kafka named: the
# in-process broker, asked for by name.
start_waitroom() {
	wr_port=$(free_port)
	base=http://$bench_host:$wr_port
	"$work/waitroom" --create-signing-key --data-dir "$work/data" >/dev/null 2>&1
	"$work/waitroom" --redis-url "redis://$bench_host:$redis_port/0" --admin-token "$ADMIN_TOKEN" \
		--kafka-brokers embedded --addr "$bench_host:$wr_port" --data-dir "$work/data" --log-level warn \
		"$@" >"$work/waitroom.log" 2>&1 &
	waitroom_pid=$!
	wait_for curl -sf "$base/healthz"
}

# busy prints how much of all cores other processes used over 3 s: other
# tenants' load skews everything on a shared machine.
busy() {
	local a b
	a=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
	sleep 3
	b=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
	echo "$a $b" | awk '{printf "%.0f%%", 100 * ($3 - $1) / (($3 - $1) + ($4 - $2))}'
}

# describe_machine prints what a run's figures depend on: the machine, the
# tools, the code under test ($COMMIT, or git's) and how busy it was.
describe_machine() {
	echo "== machine"
	echo "date:   $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpus:   $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "go:     $(go version)"
	echo "redis:  $(redis-server --version)"
	echo "limits: open files $(ulimit -n) per process; ephemeral ports $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range)"
	if [[ -z ${COMMIT:-} ]]; then
		COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
		git diff --quiet HEAD -- . 2>/dev/null || COMMIT="$COMMIT (with uncommitted changes)"
	fi
	echo "commit: $COMMIT"
	echo "load:   $(cut -d' ' -f1-3 /proc/loadavg); busy before the run (other processes, 3s): $(busy) of all cores"
}
