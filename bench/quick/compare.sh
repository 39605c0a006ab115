# Sourced (after events_pg.sh) by the side-by-side quick scripts: one `grafton
# serve` over $URL, a request document per run, rounds of closed-loop runs in
# alternating order (each run's rps, p50, p95 and Grafton's CPU per request), and
# the medians with the ratios asked for.
#   serve_grafton                      sets $base (http://127.0.0.1:port) and $gpid;
#                                      $SERVE_FLAGS are added to `grafton serve`
#   write_doc NAME PATH QUERY [VARS]   VARS: a JSON list of variable sets
#   same_answers A B [TEXT]            A's and B's documents answer the same bytes
#   run_rounds TITLE RUN…              odd rounds in this order, even ones reversed
#   report A/B…                        medians of every run, then each ratio A/B
LOADGEN=${LOADGEN:-$TARGET/release/loadgen}
[[ -x $LOADGEN ]] || (cd "$ROOT" && cargo build --release -p grafton-bench-loadgen)
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNS=${CONNS:-10}

serve_grafton() {
  local port
  port=$(free_port)
  # shellcheck disable=SC2086 # SERVE_FLAGS: extra flags, word-split on purpose
  "$GRAFTON" serve --database-url "$URL" ${SERVE_FLAGS:-} --host 127.0.0.1 --port "$port" >"$WORK/grafton.log" 2>&1 &
  gpid=$!; pids+=("$gpid")
  base="http://127.0.0.1:$port"
  for _ in $(seq 300); do
    curl -s -H 'content-type: application/json' -d '{"query":"{ __typename }"}' "$base/v1/graphql" 2>/dev/null | grep -q data && return
    sleep 0.1
  done
  echo "grafton did not start:"; cat "$WORK/grafton.log"; exit 1
}

write_doc() {
  local vars='[{}]'
  [[ -n ${4:-} ]] && vars=$4
  echo "$base/$2" >"$WORK/$1.url"
  python3 -c 'import json, sys; json.dump({"query": sys.argv[1], "variables": json.loads(sys.argv[2])}, open(sys.argv[3], "w"))' \
    "$3" "$vars" "$WORK/$1.json"
}

# same_answers A B [TEXT]: the first three variable sets answer the same bytes from
# run A's document and, twice, from B's (a cache's miss and hit), with TEXT in them.
same_answers() {
  python3 - "$WORK" "$1" "$2" "${3:-\"data\"}" <<'PY'
import json, sys, urllib.request
work, a, b, text = sys.argv[1:5]
def answer(k, v):
    doc = json.load(open(f"{work}/{k}.json"))
    body = json.dumps({"query": doc["query"], "variables": doc["variables"][v]}).encode()
    req = urllib.request.Request(open(f"{work}/{k}.url").read().strip(), body, {"content-type": "application/json"})
    return urllib.request.urlopen(req).read()
for v in (0, 1, 2):
    first = answer(a, v)
    assert text.encode() in first and first == answer(b, v) == answer(b, v), (v, first[:200])
PY
}

cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }

run_rounds() {
  local title=$1; shift
  local runs=("$@") order r run before after tck
  tck=$(getconf CLK_TCK)
  results="$WORK/runs.tsv"; : >"$results"
  echo "$title; $CONNS connections; ${DURATION} s per run; $ROUNDS rounds"
  printf '%-6s %-14s %8s %9s %9s %11s\n' round run rps p50_ms p95_ms cpu_us_req
  for r in $(seq "$ROUNDS"); do
    order=("${runs[@]}")
    if (( r % 2 == 0 )); then
      order=(); for (( i=${#runs[@]}-1; i>=0; i-- )); do order+=("${runs[i]}"); done
    fi
    for run in "${order[@]}"; do
      before=$(cpu_ticks "$gpid")
      "$LOADGEN" --url "$(cat "$WORK/$run.url")" --doc "$WORK/$run.json" --mode closed \
        --connections "$CONNS" --duration "$DURATION" >"$WORK/out.json"
      after=$(cpu_ticks "$gpid")
      python3 - "$WORK/out.json" "$r" "$run" "$before" "$after" "$tck" "$DURATION" >>"$results" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r, run, before, after, tck, dur = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
requests = max(d["rps"] * dur, 1)
print("%s\t%s\t%.0f\t%.3f\t%.3f\t%.1f\t%d" % (r, run, d["rps"], d["p50"], d["p95"], (after - before) / tck / requests * 1e6, d["failed"]))
PY
      IFS=$'\t' read -r _ _ rps p50 p95 cpu _ < <(tail -1 "$results")
      printf '%-6s %-14s %8s %9s %9s %11s\n' "$r" "$run" "$rps" "$p50" "$p95" "$cpu"
    done
  done
}

report() {
  python3 - "$results" "$@" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
runs = list(dict.fromkeys(r[1] for r in rows))
def med(run, i): return st.median(float(r[i]) for r in rows if r[1] == run)
print("medians: run rps p50_ms p95_ms cpu_us_req")
for run in runs:
    print(f"  {run:14} {med(run, 2):8.0f} {med(run, 3):9.3f} {med(run, 4):9.3f} {med(run, 5):11.1f}")
for pair in sys.argv[2:]:
    a, b = pair.split("/")
    print(f"{a}/{b}: rps {med(a, 2) / med(b, 2):.2f}x, p50 {med(a, 3) / med(b, 3):.2f}x")
if sum(int(r[6]) for r in rows):
    print("FAIL: failed requests"); sys.exit(1)
PY
}
