#!/bin/bash
# Instructions redis-server spends per enter of a new visitor (valgrind
# callgrind: a count the machine's load does not change), for the enter
# script at a git revision against this checkout's, with EVALSHA and, for
# this checkout, as a function (FCALL; the library holds the record codec
# once, as internal/store/redisstore/functions.go builds it). Each run is a fresh
# redis-server under valgrind on PORT; the per-enter figure is the slope
# between N1 and N2 enters, so start-up and the first entries cancel out.
# Visitors are cookie visitors with random ids, as the server makes them
# (the visitors buckets split as they would), sent with redis-cli --pipe.
# Usage: scripts/bench_enter_instructions.sh [before-rev] (a revision whose
# enter.lua takes 13 KEYS, from 1924db6 on, one KEY, then one KEY and a
# batch of enters: BATCH (1) a call; issue 13, docs/benchmarks.md; or, as
# now, a batch of enters of 19 or 20 named arguments each, every visitor
# from a network of its own).
# Needs valgrind and python3.
set -euo pipefail
REV=${1:-263a0aa}; PORT=${PORT:-25002}; N1=${N1:-2000}; N2=${N2:-6000}
cd "$(dirname "$0")/.."
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# prelude REV: what the store prepends to every script since issue 24, the
# vocabulary (generated) and the codes (codes.go's Lua locals); nothing
# before. REV "" is this checkout.
prelude() {
  local show="git show $1:"; [ -z "$1" ] && show="cat "
  $show"internal/store/redisstore/lua/vocab.lua" 2>/dev/null || true
  $show"internal/store/redisstore/codes.go" 2>/dev/null | python3 -c '
import re, sys
src = sys.stdin.read()
val = dict(re.findall(r"^\s*(code\w+)\s+code\s*=\s*(-?\d+)", src, re.M))
for lua, name in re.findall(r"\{\"(CODE_\w+)\", (code\w+)\}", src):
    print("local %s = %s" % (lua, val[name]))'
}
prelude "$REV" > "$work/old-record.lua"
git show "$REV:internal/store/redisstore/lua/record.lua" >> "$work/old-record.lua"
git show "$REV:internal/store/redisstore/lua/enter.lua" > "$work/old-enter.lua"
prelude "" > "$work/new-record.lua"
cat internal/store/redisstore/lua/record.lua >> "$work/new-record.lua"
cp internal/store/redisstore/lua/enter.lua "$work/new-enter.lua"
sig() {
  if grep -q '^-- KEYS\[13\] base' "$1"; then echo 13
  elif grep -q '^-- ARGV\[1\] the number of enters' "$1"; then echo batch
  elif grep -qE "^-- ARGV\[1\] enters: .*each enter's (19|20) arguments" "$1"; then
    echo "each$(grep -oE "each enter's (19|20) arguments" "$1" | grep -oE '[0-9]+')"
  else echo 1; fi
}

# commands N SIG CALL...: N enters of new random visitors as RESP, each
# "CALL... <keys and args>" in the enter signature SIG.
commands() {
  python3 - "$@" <<'EOF'
import random, sys
n, sig, call = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
batch = int(__import__('os').environ.get('BATCH', '1')) if sig == 'batch' or sig.startswith('each') else 1
pending = []
out, rnd, now, base = sys.stdout.buffer, random.Random(1), 1764583264000, 'wr:{r}:'
def b36(x):
    d, s = '0123456789abcdefghijklmnopqrstuvwxyz', ''
    while x:
        s, x = d[x % 36] + s, x // 36
    return s.rjust(8, '0')
for i in range(n):
    vid, tail, t = rnd.randbytes(16), rnd.randbytes(10), now + i
    ident, packed, field = 'v:' + vid.hex(), b'v' + vid, vid[:8]
    if sig == '13':
        args = ['13'] + [base + k for k in ('visitors', 'tickets', 'seq', 'q', 'seen', 'active', 'budget',
            'stats', 'admits', 'pow:x', 'pre', 'log')] + [base, ident, tail.hex(), str(t), 'paused',
            '1000', '10', '200', str(t), '600000', 'none', '1', '0', packed, field, b36(t), tail]
    else:
        if sig.startswith('each'):  # named per-enter arguments (issue 24), 19 or 20 of them
            each = int(sig[4:])
            args = [ident, tail.hex(), str(t), 'paused', '1000', '10', '200', str(t), '600000', '60000',
                'none', '0', '', '0', packed, field, b36(t), tail,
                '10.%d.%d.%d' % (i >> 16 & 255, i >> 8 & 255, i & 255), '5'][:each]
        else:
            each = 11
            args = [ident, tail.hex(), str(t), 'paused', '1000:10:200:%d:600000' % t, 'none', '0',
                packed, field, b36(t), tail]
        if sig == 'batch' or sig.startswith('each'):  # BATCH enters a call
            pending += args
            if len(pending) < each * batch and i < n - 1:
                continue
            args, pending = [str(len(pending) // each)] + pending, []
        args = ['1', base] + args
    args = call + args
    out.write(b'*%d\r\n' % len(args))
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.write(b'$%d\r\n%s\r\n' % (len(a), a))
EOF
}

# ir NAME HOW N: instructions of a fresh redis-server that ran N enters of
# NAME (old, new) by HOW (evalsha, fcall).
ir() {
  local name=$1 how=$2 n=$3 d; d=$(mktemp -d -p "$work")
  valgrind --tool=callgrind --callgrind-out-file="$d/cg" redis-server --port "$PORT" \
    --bind 127.0.0.1 --save '' --appendonly no --dir "$d" > "$d/log" 2>&1 &
  local vg=$!
  for _ in $(seq 100); do redis-cli -p "$PORT" ping > /dev/null 2>&1 && break; sleep 0.3; done
  local call
  if [ "$how" = fcall ]; then
    { echo '#!lua name=bench'; cat "$work/$name-record.lua"
      echo "redis.register_function('enter', function(KEYS, ARGV)"; cat "$work/$name-enter.lua"; echo 'end)'
    } | redis-cli -p "$PORT" -x function load > /dev/null
    call=(FCALL enter)
  else
    call=(EVALSHA "$(cat "$work/$name-record.lua" "$work/$name-enter.lua" | redis-cli -p "$PORT" -x script load)")
  fi
  commands "$n" "$(sig "$work/$name-enter.lua")" "${call[@]}" | redis-cli -p "$PORT" --pipe > "$d/pipe" 2>&1
  grep -q 'errors: 0,' "$d/pipe" || { echo "$name $how: $(tail -1 "$d/pipe")" >&2; exit 1; }
  redis-cli -p "$PORT" shutdown nosave > /dev/null 2>&1 || true
  wait "$vg" || true
  grep -o 'Collected : [0-9]*' "$d/log" | grep -o '[0-9]*$'
}
for run in ${RUNS:-old:evalsha new:evalsha new:fcall}; do
  name=${run%:*} how=${run#*:}
  a=$(ir "$name" "$how" "$N1"); b=$(ir "$name" "$how" "$N2")
  echo "$name ($([ "$name" = old ] && echo "$REV" || echo checkout)) $how: $(( (b - a) / (N2 - N1) )) instructions per enter"
done
