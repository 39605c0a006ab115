#!/usr/bin/env bash
# Builds the test OTLP receiver: an OpenTelemetry Collector (core v0.165.0) with
# only the otlp receiver, the contrib file exporter and the debug exporter.
# The Go module in ./collector/ is the output of the official builder (ocb
# v0.165.0) for that component set, with go.mod/go.sum pinning every dependency.
#
# Usage: tests/otlp/install.sh        -> prints the absolute binary path on stdout
# Idempotent: does nothing if the binary exists (delete .tools/ to force).
# Needs: Go >= 1.26 (PATH or /usr/local/go/bin) and the Go module proxy.
# Honours GOMODCACHE / GOCACHE / GOPROXY from the environment.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/.tools"
bin="$tools/grafton-otelcol-0.165.0"

if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

go_bin="$(command -v go || true)"
if [[ -z "$go_bin" && -x /usr/local/go/bin/go ]]; then go_bin=/usr/local/go/bin/go; fi
if [[ -z "$go_bin" ]]; then
  echo "install.sh: Go toolchain not found (need go >= 1.26)" >&2
  exit 1
fi

mkdir -p "$tools"
# Serialise concurrent installs when flock is available; re-check after the lock.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$tools/.install.lock"
  flock 9
  if [[ -x "$bin" ]]; then echo "$bin"; exit 0; fi
fi

tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
echo "install.sh: building OpenTelemetry Collector (cold: ~3-4 min on 2 cores)..." >&2
(
  cd "$here/collector"
  # Same flags ocb uses. -mod=readonly: go.sum must already cover everything.
  # GOTOOLCHAIN=local: never try to download another Go toolchain.
  CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" \
    "$go_bin" build -trimpath -ldflags='-s -w' -o "$tmp" . >&2
)
mv -f "$tmp" "$bin"
trap - EXIT
echo "$bin"
