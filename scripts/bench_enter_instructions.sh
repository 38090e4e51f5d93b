#!/bin/bash
# Instructions redis-server spends per enter of a new visitor (valgrind
# callgrind: a count the machine's load does not change), for the enter
# script at a git revision against this checkout's. Each run is a fresh
# redis-server under valgrind on PORT; the per-enter figure is the slope
# between N1 and N2 enters, so start-up and the first entries cancel out.
# Visitors are cookie visitors ("v:" and 32 hex; __rand_int__ is 12 random
# digits). Usage: scripts/bench_enter_instructions.sh [before-rev]
# (issue 13, docs/benchmarks.md).
set -euo pipefail
REV=${1:-79c638f}; PORT=${PORT:-25002}; N1=${N1:-1000}; N2=${N2:-3000}
cd "$(dirname "$0")/.."
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Before: the compact records of $REV (record.lua prepended since b948033).
if git cat-file -e "$REV:internal/redisstore/lua/record.lua" 2>/dev/null; then
  git show "$REV:internal/redisstore/lua/record.lua" > "$work/old.lua"
fi
git show "$REV:internal/redisstore/lua/enter.lua" >> "$work/old.lua"
cat internal/redisstore/lua/record.lua internal/redisstore/lua/enter.lua > "$work/new.lua"
echo 'return 1' > "$work/empty.lua"

k="wr:{r}:"
now=1764583264000
old_args=(12 ${k}visitors ${k}tickets ${k}seq ${k}q ${k}seen ${k}active ${k}budget ${k}stats ${k}admits ${k}pow:x ${k}pre ${k}log
  "v:0123456789abcdef0123__rand_int__" 0123456789abcdef0123 $now paused 1000 10 200 $now 600000 none 1 0)
# new: the packed identity (v and 16 bytes) and its visitors field (8 bytes)
# vary with the visitor, as Go computes them; the tail is 10 bytes.
new_args=(13 ${k}visitors ${k}tickets ${k}seq ${k}q ${k}seen ${k}active ${k}budget ${k}stats ${k}admits ${k}pow:x ${k}pre ${k}log ${k}
  "v:0123456789abcdef0123__rand_int__" 0123456789abcdef0123 $now paused 1000 10 200 $now 600000 none 1 0
  "v0123__rand_int__" "__rand_int__" "0mir0ezk" "0123456789")

# ir SCRIPT N ARGS...: instructions of a redis-server that ran N enters.
ir() {
  local script=$1 n=$2; shift 2
  local d; d=$(mktemp -d -p "$work")
  valgrind --tool=callgrind --callgrind-out-file="$d/cg" redis-server --port "$PORT" \
    --bind 127.0.0.1 --save '' --appendonly no --dir "$d" > "$d/log" 2>&1 &
  local vg=$!
  for _ in $(seq 100); do redis-cli -p "$PORT" ping > /dev/null 2>&1 && break; sleep 0.3; done
  local sha; sha=$(redis-cli -p "$PORT" script load "$(cat "$script")")
  redis-benchmark -p "$PORT" -n "$n" -c 1 -r 1000000000 -q EVALSHA "$sha" "$@" > /dev/null 2>&1
  redis-cli -p "$PORT" shutdown nosave > /dev/null 2>&1 || true
  wait "$vg" || true
  grep -o 'Collected : [0-9]*' "$d/log" | grep -o '[0-9]*$'
}
for run in ${RUNS:-empty old new}; do
  case $run in
    empty) args=("${new_args[@]}") ;;
    old) args=("${old_args[@]}") ;;
    new) args=("${new_args[@]}") ;;
  esac
  a=$(ir "$work/$run.lua" "$N1" "${args[@]}"); b=$(ir "$work/$run.lua" "$N2" "${args[@]}")
  echo "$run: $(( (b - a) / (N2 - N1) )) instructions per EVALSHA"
done
