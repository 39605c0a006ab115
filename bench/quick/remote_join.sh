#!/usr/bin/env bash
# A table's rows joined to a remote schema's field (issue 33's target: a query
# of 50 rows joined to a remote field answers within 1.5x of the SQL part plus
# one remote call, with exactly one remote call; compared with the same join as
# two client round trips). One `grafton serve` on a SQLite demo file, the
# graphql-js remote of tests/conformance/remote_server.mjs as a remote schema,
# `venues.author` a remote relationship to its `author(id:)`. Per round, one
# connection each, in alternating order:
#   join   Grafton: { venues(limit: 50) { id name author { name } } }
#   sql    Grafton: { venues(limit: 50) { id name } }            (the SQL part)
#   remote the remote itself: the document Grafton sends it (f0..f49)
#   two    a client doing it in two round trips: sql, then remote (one loop)
# Medians of each run's p50 and p95; the remote's call count is checked.
#   bench/quick/remote_join.sh
#   GRAFTON=… LOADGEN=… ROUNDS=3 DURATION=10 ROWS=50 bench/quick/remote_join.sh
set -euo pipefail
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
ROWS=${ROWS:-50}
source "$(dirname "$0")/lib.sh"

db="$WORK/demo.db"
demo_db "$db" 10000
start_remote
cat >"$WORK/config.yaml" <<YAML
remote_schemas:
  - name: shelf
    definition:
      url: $remote_url
      timeout_seconds: 10
tables:
  venues:
    remote_relationships:
      author:
        to_remote_schema:
          remote_schema: shelf
          lhs_fields: [id]
          remote_field: {author: {arguments: {id: \$id}}}
YAML
serve_config "$db"

calls() { gql "$remote_url" '{"query":"{ calls }"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["calls"])'; }
join="{ venues(limit: $ROWS, order_by: {id: asc}) { id name author { name } } }"
sql="{ venues(limit: $ROWS, order_by: {id: asc}) { id name } }"
before=$(calls)
answer=$(gql "$url" "$(python3 -c 'import json,sys; print(json.dumps({"query": sys.argv[1]}))' "$join")")
after=$(calls)
# One call for the join (the `calls` query itself is one more).
(( after - before == 2 )) || { echo "FAIL: the join made $((after - before - 1)) remote calls" >&2; exit 1; }
python3 - "$answer" "$ROWS" <<'PY'
import json, sys
rows = json.loads(sys.argv[1])["data"]["venues"]
assert len(rows) == int(sys.argv[2]) and all(r["author"]["name"] for r in rows), sys.argv[1][:300]
PY
# The document Grafton sends for the join, written as it writes it.
remote_doc=$(python3 - "$answer" <<'PY'
import json, sys
rows = json.loads(sys.argv[1])["data"]["venues"]
print("query { " + " ".join(f'f{i}: author(id: {r["id"]}) {{ name }}' for i, r in enumerate(rows)) + " }")
PY
)
for k in join sql remote; do
  case $k in join) q=$join;; sql) q=$sql;; remote) q=$remote_doc;; esac
  python3 -c 'import json, sys; json.dump({"query": sys.argv[1], "variables": [{}]}, open(sys.argv[2], "w"))' "$q" "$WORK/$k.json"
done
load() { # DOC URL: one connection, closed loop
  "$LOADGEN" --url "$2" --doc "$WORK/$1.json" --mode closed --connections 1 --duration "$DURATION"
}
two() { # the same join as a client's two round trips, one after the other
  python3 - "$url" "$remote_url" "$sql" "$remote_doc" "$DURATION" <<'PY'
import http.client, json, statistics, sys, time, urllib.parse
g, r, sql, doc, dur = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
def conn(u):
    p = urllib.parse.urlparse(u); return http.client.HTTPConnection(p.hostname, p.port), p.path
(gc, gp), (rc, rp) = conn(g), conn(r)
def post(c, path, q):
    c.request("POST", path, json.dumps({"query": q}), {"content-type": "application/json"})
    body = c.getresponse().read(); assert b'"data"' in body, body[:200]
    return json.loads(body)
lat, end = [], time.time() + dur
while time.time() < end:
    t = time.perf_counter()
    rows = post(gc, gp, sql)["data"]["venues"]
    post(rc, rp, "query { " + " ".join(f'f{i}: author(id: {v["id"]}) {{ name }}' for i, v in enumerate(rows)) + " }")
    lat.append((time.perf_counter() - t) * 1000)
lat.sort()
print(json.dumps({"rps": len(lat) / dur, "p50": statistics.median(lat), "p95": lat[int(len(lat) * 0.95)], "failed": 0}))
PY
}
stat() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.0f\t%.3f\t%.3f\t%d" % (d["rps"], d["p50"], d["p95"], d["failed"]))' "$1"; }
results="$WORK/runs.tsv"; : >"$results"
echo "$ROWS rows joined to a remote field; one connection; ${DURATION} s per run; $ROUNDS rounds"
printf '%-6s %-7s %8s %9s %9s\n' round run rps p50_ms p95_ms
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order=(join sql remote two); else order=(two remote sql join); fi
  for run in "${order[@]}"; do
    case $run in
      join|sql) load "$run" "$url" >"$WORK/out.json";;
      remote) load remote "$remote_url" >"$WORK/out.json";;
      two) two >"$WORK/out.json";;
    esac
    row=$(stat "$WORK/out.json")
    printf '%s\t%s\t%s\n' "$r" "$run" "$row" >>"$results"
    IFS=$'\t' read -r _ _ rps p50 p95 _ < <(tail -1 "$results")
    printf '%-6s %-7s %8s %9s %9s\n' "$r" "$run" "$rps" "$p50" "$p95"
  done
done
python3 - "$results" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
def med(run, i): return st.median(float(r[i]) for r in rows if r[1] == run)
for i, name in ((3, "p50"), (4, "p95")):
    join, sql, remote, two = (med(k, i) for k in ("join", "sql", "remote", "two"))
    print(f"{name}: join {join:.3f} ms; SQL part {sql:.3f} + one remote call {remote:.3f} = {sql + remote:.3f} ms "
          f"(ratio {join / (sql + remote):.2f}); two client round trips {two:.3f} ms (join / two {join / two:.2f})")
join, sql, remote = (med(k, 3) for k in ("join", "sql", "remote"))
print(f"target (p50 within 1.5x of SQL + one call): {'met' if join <= 1.5 * (sql + remote) else 'NOT met'}")
if sum(int(r[5]) for r in rows):
    print("FAIL: failed requests"); sys.exit(1)
PY
