#!/usr/bin/env bash
# A slow remote schema under load (issue 33's target: with 100 concurrent clients
# on a remote that answers in 50 ms, Grafton's RSS stays under 100 MB and no other
# query slows). One `grafton serve` on a SQLite demo file with the graphql-js
# remote of tests/conformance/remote_server.mjs (DELAY_MS=50) as a remote schema.
# Per round: a table query (`{ venues(limit: 1) { id } }`, 4 connections) alone,
# then the same beside 100 connections calling the remote (`{ echo }`), the
# order alternating. Per run: rps, p50 and p95 of each load, and Grafton's peak
# RSS (VmHWM is not reset between runs, so VmRSS is sampled every 100 ms).
#   bench/quick/remote_load.sh
#   GRAFTON=… LOADGEN=… ROUNDS=3 DURATION=10 CLIENTS=100 DELAY_MS=50 bench/quick/remote_load.sh
set -euo pipefail
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-100}
DELAY_MS=${DELAY_MS:-50}
source "$(dirname "$0")/lib.sh"

db="$WORK/demo.db"
demo_db "$db" 10000

start_remote "$DELAY_MS"
cat >"$WORK/config.yaml" <<YAML
remote_schemas:
  - name: shelf
    definition:
      url: http://127.0.0.1:$remote_port/graphql
      timeout_seconds: 10
YAML
serve_config "$db"
answer=$(gql "$url" '{"query":"{ echo }"}')
[[ $answer == '{"data":{"echo":"hi"}}' ]] || { echo "FAIL: the remote answered $answer" >&2; cat "$WORK/grafton.log" >&2; exit 1; }

declare -A query=([remote]='{ echo }' [table]='{ venues(limit: 1) { id } }')
for k in remote table; do
  python3 -c 'import json, sys; json.dump({"query": sys.argv[1], "variables": [{}]}, open(sys.argv[2], "w"))' \
    "${query[$k]}" "$WORK/$k.json"
done
load() { "$LOADGEN" --url "${3:-$url}" --doc "$WORK/$1.json" --mode closed --connections "$2" --duration "${4:-$DURATION}"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$gpid/status"; }
sample_rss() { local peak=0 v; while kill -0 "$gpid" 2>/dev/null; do v=$(rss_kb); (( v > peak )) && peak=$v; echo "$peak" >"$WORK/peak.tmp" && mv "$WORK/peak.tmp" "$WORK/peak"; sleep 0.1; done; }
stat() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f\t%.2f\t%.2f\t%d" % (d["rps"], d["p50"], d["p95"], d["failed"]))' "$1"; }
results="$WORK/runs.tsv"; : >"$results"
echo "table query: 4 connections; beside it: $CLIENTS connections on a remote answering in $DELAY_MS ms; ${DURATION} s per run; $ROUNDS rounds"
printf '%-6s %-8s %9s %8s %8s %9s %8s %8s %8s %7s %7s\n' round run t_rps t_p50 t_p95 r_rps r_p50 r_p95 peak_MB g_cpu_s n_cpu_s
for r in $(seq "$ROUNDS"); do
  # `direct`: the same remote load sent to the remote itself, not through
  # Grafton: what sharing the two cores with the remote and the load costs.
  if (( r % 2 )); then order=(alone beside direct); else order=(direct beside alone); fi
  for run in "${order[@]}"; do
    load table 4 >/dev/null  # warm-up
    sample_rss & sampler=$!
    g0=$(cpu_ticks "$gpid"); n0=$(cpu_ticks "$rpid")
    if [[ $run != alone ]]; then
      target=$url; [[ $run == direct ]] && target=$remote_url
      # The remote load runs a second before and after the table's.
      load remote "$CLIENTS" "$target" $((DURATION + 2)) >"$WORK/remote.out" & lp=$!
      sleep 1
      load table 4 >"$WORK/table.out"
      wait "$lp"
      rrow=$(stat "$WORK/remote.out")
    else
      load table 4 >"$WORK/table.out"
      rrow=$'-\t-\t-\t0'
    fi
    g1=$(cpu_ticks "$gpid"); n1=$(cpu_ticks "$rpid")
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    peak=$(( $(cat "$WORK/peak") / 1024 ))
    trow=$(stat "$WORK/table.out")
    # Seconds of CPU over the run: Grafton's, and the remote's (Node).
    gcpu=$(python3 -c "print(f'{($g1 - $g0) / $TCK:.1f}')"); ncpu=$(python3 -c "print(f'{($n1 - $n0) / $TCK:.1f}')")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$run" "$trow" "$rrow" "$peak" "$gcpu" "$ncpu" >>"$results"
    IFS=$'\t' read -r _ _ trps tp50 tp95 tf rrps rp50 rp95 rf pk gc nc < <(tail -1 "$results")
    printf '%-6s %-8s %9s %8s %8s %9s %8s %8s %8s %7s %7s\n' "$r" "$run" "$trps" "$tp50" "$tp95" "$rrps" "$rp50" "$rp95" "$pk" "$gc" "$nc"
  done
done
python3 - "$results" "$DURATION" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
def med(run, i): return st.median(float(r[i]) for r in rows if r[1] == run)
alone, beside = med("alone", 4), med("beside", 4)
peak = max(float(r[10]) for r in rows)
direct = med("direct", 4)
print(f"\ntable p95: alone {alone:.2f} ms, beside the remote load through Grafton {beside:.2f} ms "
      f"(ratio {beside / alone:.2f}), beside the same load sent to the remote directly {direct:.2f} ms "
      f"(ratio {direct / alone:.2f})")
print(f"table rps: alone {med('alone', 2):.0f}, beside {med('beside', 2):.0f}, direct {med('direct', 2):.0f}")
print(f"remote: median {med('beside', 6):.0f} rps, p95 {med('beside', 8):.1f} ms; Grafton's peak RSS {peak:.0f} MB")
gcpu, ncpu, rps = med("beside", 11), med("beside", 12), med("beside", 6)
tcpu, trps = med("alone", 11), med("alone", 2)
print(f"CPU beside: Grafton {gcpu:.1f} s, the remote (Node) {ncpu:.1f} s over {sys.argv[2]} s; alone: Grafton {tcpu:.1f} s")
print(f"target: RSS < 100 MB: {'met' if peak < 100 else 'NOT met'}")
failed = sum(int(r[5]) + int(r[9]) for r in rows)
if failed:
    print(f"FAIL: {failed} failed requests"); sys.exit(1)
PY
