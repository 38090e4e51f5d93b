#!/usr/bin/env bash
# redis_by_kind.sh PORT SECONDS: what a loopback redis-server's commands are
# for. It listens with MONITOR for SECONDS (bounded by timeout) and counts
# every command under its kind: a script call (FCALL of waitroom_<op>_<v>,
# or EVALSHA/EVAL named by its SHA from internal/store/redisstore/lua) with the
# commands it ran inside, or a
# plain command by name and key suffix ("xread log", "get settings"). As
# INFO commandstats counts them: the script call is one command, each
# redis.call inside another. MONITOR costs Redis some CPU while it runs:
# take Redis CPU figures outside its seconds.
# Output: one line per kind, most commands first: kind, calls, commands,
# commands per call, commands per second; then the script kinds' commands.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:?port}
secs=${2:?seconds}
lua=internal/store/redisstore/lua

# SHA → script name: scripts that read records start with record.lua (scripts.go).
shas=$(mktemp)
trap 'rm -f "$shas"' EXIT
for f in "$lua"/*.lua; do
	name=$(basename "$f" .lua)
	[[ $name == record ]] && continue
	printf '%s %s\n' "$(cat "$lua/record.lua" "$f" | sha1sum | cut -c1-40)" "$name" >>"$shas"
	printf '%s %s\n' "$(sha1sum <"$f" | cut -c1-40)" "$name" >>"$shas"
done

timeout "$secs" redis-cli -p "$port" monitor 2>/dev/null | awk -v secs="$secs" -v shafile="$shas" '
BEGIN { while ((getline l < shafile) > 0) { split(l, p, " "); name[p[1]] = p[2] } }
# A MONITOR line: time [db source] "cmd" "arg" ...
{
	src = $3; sub(/\]$/, "", src)
	cmd = tolower($4); gsub(/"/, "", cmd)
	if (cmd == "ok" || cmd == "") next
	if (src == "lua") {
		if (cur == "") cur = "script?"
		n[cur]++; in_[cur " " cmd]++
		next
	}
	if (cmd == "evalsha" || cmd == "eval" || cmd == "fcall" || cmd == "fcall_ro") {
		s = $5; gsub(/"/, "", s)
		if (cmd ~ /^fcall/) { sub(/^waitroom_/, "", s); sub(/_[0-9a-f]+$/, "", s); cur = s }
		else cur = (cmd == "evalsha" && (s in name)) ? name[s] : cmd "?"
		calls[cur]++; n[cur]++
		next
	}
	cur = ""
	if (cmd == "monitor") next
	key = $5; gsub(/"/, "", key); sub(/.*[}:]/, "", key)
	k = cmd " " key
	calls[k]++; n[k]++
}
END {
	for (k in n) total += n[k]
	printf "%d commands in %d s (%.1f/s)\n", total, secs, total / secs
	printf "%-24s %8s %9s %9s %9s\n", "kind", "calls", "commands", "per call", "per s"
	cmdline = "sort -t\"|\" -k3,3nr"
	for (k in n) printf "%-24s|%8d|%9d|%9.1f|%9.1f\n", k, calls[k], n[k], n[k] / (calls[k] ? calls[k] : 1), n[k] / secs | cmdline
	close(cmdline)
	print "inside scripts (kind command: count)"
	for (k in in_) printf "  %-30s %d\n", k, in_[k] | "sort"
	close("sort")
}' | tr '|' ' '
