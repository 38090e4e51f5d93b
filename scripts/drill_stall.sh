#!/usr/bin/env bash
# drill_stall.sh PAUSE_MS: a Redis stall under a bounded load (docs/benchmarks.md,
# "Redis stalls and an older snapshot"). It starts redis-server (no
# persistence) and one waitroom, runs cmd/loadgen in open loop (200 requests/s:
# one enter then four status reads per visitor, 45 s), pauses Redis with
# CLIENT PAUSE PAUSE_MS ALL 8 s in, polls /readyz every 100 ms, and prints the
# requests, their errors, when degraded mode started and ended after the
# pause began, and the /readyz polls that were not 200.
#
#   go build -o /tmp/waitroom ./cmd/waitroom && go build -o /tmp/loadgen ./cmd/loadgen
#   BIN=/tmp/waitroom LOADGEN=/tmp/loadgen scripts/drill_stall.sh 5000
#
# PORT_REDIS, ADDR (a loopback host:port) and OUT (a directory) may be set.
set -u
P=${1:?usage: drill_stall.sh PAUSE_MS}
BIN=${BIN:-/tmp/waitroom}
LOADGEN=${LOADGEN:-/tmp/loadgen}
PORT_REDIS=${PORT_REDIS:-29379}
ADDR=${ADDR:-127.0.0.2:29080}
D=${OUT:-$(mktemp -d)}/stall-$P
rm -rf "$D"; mkdir -p "$D/data"
TOKEN=drill-admin-token-0123456789abcdef
redis-server --port "$PORT_REDIS" --bind 127.0.0.1 --save "" --appendonly no --dir "$D" >"$D/redis.log" 2>&1 &
RPID=$!
for _ in $(seq 50); do redis-cli -p "$PORT_REDIS" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN" --create-signing-key --data-dir "$D/data" >/dev/null 2>&1
"$BIN" --addr "$ADDR" --data-dir "$D/data" --redis-url "redis://127.0.0.1:$PORT_REDIS/0" --kafka-brokers embedded \
  --admin-token "$TOKEN" --embed-demo-addr off --log-format json 2>"$D/waitroom.log" &
WPID=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://$ADDR/readyz" && break; sleep 0.1; done
(for _ in $(seq 500); do echo "$(date +%s.%N) $(curl -s -o /dev/null -w '%{http_code}' -m 2 "http://$ADDR/readyz")"; sleep 0.1; done) >"$D/readyz.log" &
XPID=$!
"$LOADGEN" --url "http://$ADDR" --admin-token "$TOKEN" --reset --room drill \
  --settings '{"capacity":100000,"batch_size":100,"batch_interval_ms":200,"jitter_ms":0,"session_ttl_s":3600,"abandon_after_s":3600,"bot_protection":{"proof_of_work":"off","unarrived_per_network":0}}' \
  --mode mixed --status-every 4 --rate 200 --concurrency 50 --duration 45s --warmup 1s --timeout 30s --json >"$D/loadgen.json" 2>"$D/loadgen.err" &
LPID=$!
sleep 8
echo "pause $(date +%s.%N)" >"$D/pause.log"
redis-cli -p "$PORT_REDIS" CLIENT PAUSE "$P" ALL >/dev/null
wait $LPID
kill $XPID 2>/dev/null; wait $XPID 2>/dev/null
kill $WPID; wait $WPID 2>/dev/null
kill $RPID; wait $RPID 2>/dev/null
python3 - "$D" <<'PY'
import datetime, json, sys
d = sys.argv[1]
pause = float(open(d + "/pause.log").read().split()[1])
on = off = None
for line in open(d + "/waitroom.log"):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = datetime.datetime.fromisoformat(m["time"].rstrip("Z")[:26]).replace(tzinfo=datetime.timezone.utc).timestamp()
    if "switching to degraded" in m["msg"] and on is None:
        on = t - pause
    if "leaving degraded" in m["msg"]:
        off = t - pause
lg = json.load(open(d + "/loadgen.json"))
total = sum(o["requests"] for o in lg["ops"].values())
errors = {k: o["errors"] for k, o in lg["ops"].items() if o["errors"]}
worst = max(o["max_ms"] for o in lg["ops"].values())
ready = sum(1 for l in open(d + "/readyz.log") if l.split()[1] != "200")
fmt = lambda x: "never" if x is None else "%.2f s" % x
print(f"requests {total}, errors {errors or 'none'}, slowest {worst:.0f} ms; degraded {fmt(on)} and back {fmt(off)} after the pause began; /readyz not 200 in {ready} polls (100 ms apart)")
PY
