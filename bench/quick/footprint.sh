#!/usr/bin/env bash
# Idle memory and start-up time of `grafton serve` on SQLite demo files.
#   bench/quick/footprint.sh [ROWS...]        default: 10000 100000
# For each size: creates the demo file once (in $WORK, default a temp dir), then
#  - idle RSS: start, wait for the first answer, sleep 5 s, read VmRSS (3 runs);
#  - start-up: process start → first successful answer to a query, polled in a
#    tight curl loop (about 10 ms resolution), 5 runs; prints each run and the median.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GRAFTON=${GRAFTON:-${CARGO_TARGET_DIR:-$ROOT/target}/release/grafton}
[[ -x $GRAFTON ]] || (cd "$ROOT" && cargo build --release -p grafton)
WORK=${WORK:-$(mktemp -d)}
PORT=${PORT:-18990}
sizes=("$@"); [[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 100000)
query='{"query":"{ venues(limit: 1) { id } }"}'
answered() { curl -s -H 'content-type: application/json' -d "$query" "http://127.0.0.1:$PORT/v1/graphql" 2>/dev/null | grep -q '"data"'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pid=""
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; true' EXIT
for rows in "${sizes[@]}"; do
  db="$WORK/demo$rows.db"
  if [[ ! -f $db ]]; then
    "$GRAFTON" demo --file "$db" --rows "$rows" --port "$PORT" >/dev/null 2>&1 & pid=$!
    until answered; do sleep 0.2; done
    kill $pid; wait $pid 2>/dev/null || true; pid=""
  fi
  rss=()
  for _ in 1 2 3; do
    "$GRAFTON" serve --database-url "$db" --port "$PORT" >/dev/null 2>&1 & pid=$!
    until answered; do sleep 0.05; done
    sleep 5
    rss+=("$(awk '/^VmRSS/{print $2}' /proc/$pid/status)")
    kill $pid; wait $pid 2>/dev/null || true; pid=""
  done
  starts=()
  for _ in 1 2 3 4 5; do
    t0=$(date +%s%N)
    "$GRAFTON" serve --database-url "$db" --port "$PORT" >/dev/null 2>&1 & pid=$!
    until answered; do :; done
    t1=$(date +%s%N)
    starts+=("$(( (t1 - t0) / 1000000 ))")
    kill $pid; wait $pid 2>/dev/null || true; pid=""
  done
  echo "rows=$rows idle_rss_kb=[${rss[*]}] median_kb=$(printf '%s\n' "${rss[@]}" | median) startup_ms=[${starts[*]}] median_ms=$(printf '%s\n' "${starts[@]}" | median)"
done
