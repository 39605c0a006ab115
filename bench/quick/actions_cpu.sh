#!/usr/bin/env bash
# What a synchronous action costs Grafton (issue 33's target: at most 0.2 ms of
# Grafton CPU per request over the handler's own time). One `grafton serve` on a
# SQLite demo file with a query action `ping` whose handler is
# bench/quick/action_handler.cjs (Node, answers {"ok": true} at once); per round,
# bench/loadgen loads `{ ping { ok } }` and, for reference, a table query
# (`{ venues(limit: 1) { id } }`), the order alternating. Per run: rps, p50, p95 and
# Grafton's CPU per request (utime+stime of /proc/PID/stat over the run / requests).
#   bench/quick/actions_cpu.sh
#   GRAFTON=… LOADGEN=… ROUNDS=5 DURATION=10 CONNECTIONS=20 bench/quick/actions_cpu.sh
set -euo pipefail
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONNECTIONS=${CONNECTIONS:-20}
source "$(dirname "$0")/lib.sh"

db="$WORK/demo.db"
demo_db "$db" 10000

hook_port=$(free_port)
node "$HERE/action_handler.cjs" "$hook_port" & pids+=($!)
cat >"$WORK/config.yaml" <<YAML
actions:
  - name: ping
    definition:
      handler: http://127.0.0.1:$hook_port/ping
      output_type: Pong!
      type: query
custom_types:
  objects:
    - name: Pong
      fields:
        - {name: ok, type: Boolean!}
YAML
serve_config "$db"
answer=$(gql "$url" '{"query":"{ ping { ok } }"}')
[[ $answer == '{"data":{"ping":{"ok":true}}}' ]] || { echo "FAIL: the action answered $answer" >&2; exit 1; }

declare -A query=([action]='{ ping { ok } }' [table]='{ venues(limit: 1) { id } }')
for k in action table; do
  python3 -c 'import json, sys; json.dump({"query": sys.argv[1], "variables": [{}]}, open(sys.argv[2], "w"))' \
    "${query[$k]}" "$WORK/$k.json"
done
load() { "$LOADGEN" --url "$url" --doc "$WORK/$1.json" --mode closed --connections "$CONNECTIONS" --duration "$2"; }
results="$WORK/runs.tsv"; : >"$results"
echo "$CONNECTIONS connections, closed loop, ${DURATION} s per run after ${WARMUP} s of warm-up; $ROUNDS rounds"
printf '%-6s %-7s %10s %9s %9s %15s %7s\n' round query rps p50_ms p95_ms grafton_us_req failed
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order=(action table); else order=(table action); fi
  for k in "${order[@]}"; do
    load "$k" "$WARMUP" >"$WORK/warm.json"
    t0=$(cpu_ticks "$gpid")
    load "$k" "$DURATION" >"$WORK/run.json"
    t1=$(cpu_ticks "$gpid")
    python3 "$HERE/loadgen_row.py" "$WORK/run.json" "$WORK/warm.json" "$r" "$k" "$t0" "$t1" "$TCK" >>"$results"
    tail -1 "$results" | awk -F'\t' '{printf "%-6s %-7s %10.0f %9.2f %9.2f %15.1f %7d\n", $1, $2, $3, $4, $5, $6, $7}'
  done
done
echo "handler calls: $(curl -s "http://127.0.0.1:$hook_port/calls")"
python3 - "$results" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
med = {k: {m: st.median(float(r[i]) for r in rows if r[1] == k) for m, i in (("rps", 2), ("p50", 3), ("p95", 4), ("cpu", 5))}
       for k in ("action", "table")}
print("\nmedians        action      table")
for m, name in (("cpu", "Grafton µs/req"), ("rps", "rps"), ("p50", "p50 ms"), ("p95", "p95 ms")):
    print(f"{name:<14} {med['action'][m]:>8.1f} {med['table'][m]:>10.1f}")
cpu = med["action"]["cpu"]
print(f"target: an action request ≤ 200 µs of Grafton CPU: {'met' if cpu <= 200 else 'NOT met'} ({cpu:.1f} µs)")
failed = sum(int(r[6]) for r in rows)
if failed:
    print(f"FAIL: {failed} failed requests")
    sys.exit(1)
PY
