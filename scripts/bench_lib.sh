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
