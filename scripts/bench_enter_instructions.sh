#!/bin/bash
# Instructions redis-server spends per enter of a new visitor (valgrind
# callgrind: a count the machine's load does not change), for the enter
# script at a git revision against this checkout's. Each run is a fresh
# redis-server under valgrind on PORT; the per-enter figure is the slope
# between N1 and N2 enters, so start-up and the first 128 entries (listpacks)
# cancel out. Usage: scripts/bench_enter_instructions.sh [before-rev]
# (issue 13, docs/benchmarks.md).
set -euo pipefail
REV=${1:-b948033}; PORT=${PORT:-25002}; N1=${N1:-1000}; N2=${N2:-3000}
cd "$(dirname "$0")/.."
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
git show "$REV:internal/redisstore/lua/enter.lua" > "$work/old.lua"
cat internal/redisstore/lua/record.lua internal/redisstore/lua/enter.lua > "$work/new.lua"
echo 'return 1' > "$work/empty.lua"

# ir SCRIPT TAIL N: instructions of a redis-server that ran N enters.
ir() {
  local d; d=$(mktemp -d -p "$work")
  valgrind --tool=callgrind --callgrind-out-file="$d/cg" redis-server --port "$PORT" \
    --bind 127.0.0.1 --save '' --appendonly no --dir "$d" > "$d/log" 2>&1 &
  local vg=$!
  for _ in $(seq 100); do redis-cli -p "$PORT" ping > /dev/null 2>&1 && break; sleep 0.3; done
  local sha; sha=$(redis-cli -p "$PORT" script load "$(cat "$1")")
  local k="wr:{r}:"
  redis-benchmark -p "$PORT" -n "$3" -c 1 -r 1000000000 -q EVALSHA "$sha" 11 \
    ${k}visitors ${k}tickets ${k}seq ${k}q ${k}seen ${k}active ${k}budget ${k}stats ${k}admits ${k}pow:x ${k}pre \
    "v:0123456789abcdef__rand_int__" "$2" 1764583264000 paused 1000 10 200 1764583264000 600000 none 1 0 > /dev/null 2>&1
  redis-cli -p "$PORT" shutdown nosave > /dev/null 2>&1 || true
  wait "$vg" || true
  grep -o 'Collected : [0-9]*' "$d/log" | grep -o '[0-9]*$'
}
for run in "empty x" "old 0123456789abcdef0123456789abcdef" "new 0123456789abcdef0123"; do
  set -- $run
  a=$(ir "$work/$1.lua" "$2" "$N1"); b=$(ir "$work/$1.lua" "$2" "$N2")
  echo "$1: $(( (b - a) / (N2 - N1) )) instructions per EVALSHA"
done
