#!/usr/bin/env bash
# only_go.sh CMD...: run CMD as on a machine with only Go installed. In a
# private mount namespace every service binary the tests can use
# (redis-server, Chromium, Node, nginx, Prometheus, podman, Python) is
# covered with /dev/null, so PATH lookups fail as on a fresh machine while
# the rest of the system stays. Needs root (unshare -m). CI runs the README's
# test command this way so it stays green without the services.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 CMD..." >&2; exit 2; }
hide=(redis-server redis-cli redis-benchmark chromium node npm npx nginx prometheus promtool podman buildah runc python3)
exec unshare -m --propagation private bash -c '
  for name in "$@"; do
    [ "$name" = -- ] && { shift; break; }
    shift
    while p=$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH command -v "$name" 2>/dev/null) && [ -n "$p" ] && [ -f "$p" ] && [ -x "$p" ]; do
      mount --bind /dev/null "$(readlink -f "$p")"
    done
  done
  exec "$@"
' bash "${hide[@]}" -- "$@"
