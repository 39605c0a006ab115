#!/usr/bin/env bash
# Two Grafton binaries side by side on one SQLite demo file: requests a second and
# each server's CPU per request (utime+stime from /proc/PID/stat over the run,
# divided by loadgen's requests), a cheap query (`venues_by_pk`), ROUNDS rounds
# alternating the order, then the medians and after/before ratios.
#
#   BEFORE=/path/to/old/grafton AFTER=/path/to/new/grafton [CONNS=10 ROUNDS=6 DURATION=6] bench/quick/ab_cpu.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
LOADGEN=${LOADGEN:-$TARGET/release/loadgen}
BEFORE=${BEFORE:?the binary to compare against}
AFTER=${AFTER:?the binary to compare}
CONNS=${CONNS:-10}
ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-6}
ROWS=${ROWS:-100000}
[[ -x $LOADGEN ]] || (cd "$ROOT" && cargo build --release -p grafton-bench-loadgen)
WORK=$(mktemp -d /tmp/grafton-ab.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 240); do curl -sf -m 1 "http://127.0.0.1:$1/healthz" >/dev/null && return; sleep 0.5; done; echo "no answer on $1" >&2; exit 1; }

# The demo file, written by the AFTER binary's demo command (stopped once it answers).
port=$(free_port)
"$AFTER" demo --file "$WORK/demo.db" --rows "$ROWS" --port "$port" >"$WORK/demo.log" 2>&1 & demo=$!
wait_up "$port"; kill "$demo"; wait "$demo" 2>/dev/null || true
declare -A pid port_of
for w in before after; do
  bin=$BEFORE; [[ $w == after ]] && bin=$AFTER
  port_of[$w]=$(free_port)
  "$bin" serve --database-url "$WORK/demo.db" --port "${port_of[$w]}" >"$WORK/$w.log" 2>&1 & pid[$w]=$!
  pids+=("${pid[$w]}")
  wait_up "${port_of[$w]}"
done
python3 -c 'import json, sys; json.dump({"query": "query ($id: Int!) { venues_by_pk(id: $id) { id name city } }", "variables": [{"id": i} for i in range(1, 1000, 7)]}, open(sys.argv[1], "w"))' "$WORK/doc.json"
TCK=$(getconf CLK_TCK)
ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
load() { "$LOADGEN" --url "http://127.0.0.1:${port_of[$1]}/v1/graphql" --doc "$WORK/doc.json" --connections "$CONNS" --duration "$2"; }
: >"$WORK/runs.tsv"
printf '%-6s %-7s %9s %14s %7s\n' round binary rps cpu_us_per_req failed
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order=(before after); else order=(after before); fi
  for w in "${order[@]}"; do
    load "$w" 2 >/dev/null
    t0=$(ticks "${pid[$w]}")
    load "$w" "$DURATION" >"$WORK/run.json"
    t1=$(ticks "${pid[$w]}")
    python3 - "$WORK/run.json" "$r" "$w" "$t0" "$t1" "$TCK" >>"$WORK/runs.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); r, w = sys.argv[2], sys.argv[3]
t0, t1, tck = map(float, sys.argv[4:7])
print(r, w, d["rps"], round((t1 - t0) / tck * 1e6 / max(1, d["requests"]), 1), d["failed"], sep="\t")
PY
    tail -1 "$WORK/runs.tsv" | awk -F'\t' '{printf "%-6s %-7s %9.0f %14.1f %7d\n", $1, $2, $3, $4, $5}'
  done
done
python3 - "$WORK/runs.tsv" <<'PY'
import statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
for i, what in [(2, "req/s"), (3, "CPU us/req")]:
    b = st.median(float(x[i]) for x in rows if x[1] == "before")
    a = st.median(float(x[i]) for x in rows if x[1] == "after")
    print(f"median {what}: before {b:,.1f}, after {a:,.1f}, after/before {a / b:.3f}")
if any(int(x[4]) for x in rows):
    sys.exit("some requests failed")
PY
