#!/usr/bin/env bash
# Reproducible static builds of waitroom: the same source and Go version give
# the same bytes. CGO off (static, no libc), -trimpath (no local paths),
# no VCS stamp and an empty build id (nothing of the checkout's state or
# time), the version stamped into main.version. Built with -tags noembedded:
# a release has no in-process Redis or Kafka (miniredis, kfake) and no demo,
# and refuses to start without --redis-url and --kafka-brokers.
#
#   scripts/release.sh [VERSION]        dist/waitroom-VERSION-linux-{amd64,arm64} and SHA256SUMS
#   scripts/release.sh build OUT        one binary for $GOOS/$GOARCH (the Dockerfile uses this)
#   scripts/release.sh check [VERSION]  build everything twice and compare the bytes
#   scripts/release.sh image-root DIR   the runtime image's files under DIR (the
#                                       binary, CA certificates, /data, /tmp,
#                                       /keys) for the Dockerfile's `prebuilt`
#                                       stage, which builds offline
#
# VERSION defaults to `git describe --tags --always --dirty`, else "dev".
set -euo pipefail
cd "$(dirname "$0")/.."

version_default() { git describe --tags --always --dirty 2>/dev/null || echo dev; }

build() { # build OUT [VERSION]
  local out=$1 version=${2:-${VERSION:-$(version_default)}}
  CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -tags noembedded -trimpath -buildvcs=false \
    -ldflags "-s -w -buildid= -X main.version=${version}" -o "$out" ./cmd/waitroom
}

release() { # release DIR VERSION
  local dir=$1 version=$2
  mkdir -p "$dir"
  for arch in amd64 arm64; do
    GOOS=linux GOARCH=$arch build "$dir/waitroom-${version}-linux-${arch}" "$version"
  done
  (cd "$dir" && sha256sum waitroom-"${version}"-linux-* > SHA256SUMS)
}

case "${1:-}" in
image-root)
  [ $# -ge 2 ] || { echo "usage: $0 image-root DIR" >&2; exit 2; }
  root=$2
  mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/data" "$root/tmp" "$root/keys"
  build "$root/usr/local/bin/waitroom"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  ;;
build)
  [ $# -ge 2 ] || { echo "usage: $0 build OUT" >&2; exit 2; }
  build "$2"
  ;;
check)
  version=${2:-$(version_default)}
  a=$(mktemp -d) b=$(mktemp -d) cache=$(mktemp -d)
  trap 'rm -rf "$a" "$b" "$cache"' EXIT
  release "$a" "$version"
  # The second build starts from an empty build cache, so that it cannot
  # reuse the first's work.
  GOCACHE=$cache release "$b" "$version"
  if cmp -s "$a/SHA256SUMS" "$b/SHA256SUMS"; then
    echo "reproducible:"; cat "$a/SHA256SUMS"
  else
    echo "NOT reproducible:" >&2; diff "$a/SHA256SUMS" "$b/SHA256SUMS" >&2; exit 1
  fi
  ;;
*)
  version=${1:-$(version_default)}
  release dist "$version"
  cat dist/SHA256SUMS
  ;;
esac
