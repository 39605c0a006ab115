#!/usr/bin/env bash
# What a PostGIS filter costs against the plain list of the same rows (issue 34).
# A throwaway PostgreSQL with PostGIS, POINTS random geography points over a
# 37 x 33 km box around Paris (a GiST index on them), one `grafton serve`. Per
# round, CONNS connections closed loop for DURATION s each, in alternating order:
#   spatial       { place(where: {location: {_st_d_within: {distance: D, from: P}}}) { id name location } }
#   plain         { place(where: {id: {_in: [the same ids]}}) { id name location } }
#   spatial_text  the spatial filter, without the location (no GeoJSON to write)
#   plain_text    the plain list, without the location
# Every query returns the same rows (checked first). Medians of each run's rps,
# p50 and p95, Grafton's CPU per request, and the ratios spatial/plain.
#   bench/quick/spatial.sh
#   GRAFTON=… LOADGEN=… POINTS=100000 ROUNDS=3 DURATION=10 CONNS=10 bench/quick/spatial.sh
set -euo pipefail
POINTS=${POINTS:-100000}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNS=${CONNS:-10}
DISTANCE=${DISTANCE:-450}
source "$(dirname "$0")/events_pg.sh"
LOADGEN=${LOADGEN:-$TARGET/release/loadgen}
[[ -x $LOADGEN ]] || (cd "$ROOT" && cargo build --release -p grafton-bench-loadgen)
start_events_pg grafton-spatial

psql -q -v ON_ERROR_STOP=1 "$URL" <<SQL
CREATE EXTENSION postgis;
CREATE TABLE place (id int PRIMARY KEY, name text NOT NULL, location geography(Point, 4326) NOT NULL);
INSERT INTO place
  SELECT i, 'place ' || i,
         ST_SetSRID(ST_MakePoint(2.10 + random() * 0.5, 48.70 + random() * 0.3), 4326)::geography
  FROM generate_series(1, $POINTS) i;
CREATE INDEX place_location ON place USING gist (location);
ANALYZE place;
SQL

port=$(free_port)
"$GRAFTON" serve --database-url "$URL" --host 127.0.0.1 --port "$port" >"$WORK/grafton.log" 2>&1 &
gpid=$!; pids+=("$gpid")
url="http://127.0.0.1:$port/v1/graphql"
for _ in $(seq 300); do
  curl -s -H 'content-type: application/json' -d '{"query":"{ __typename }"}' "$url" 2>/dev/null | grep -q data && break
  sleep 0.1
done

from='{type: "Point", coordinates: [2.35, 48.85]}'
spatial_where="{location: {_st_d_within: {distance: $DISTANCE, from: $from}}}"
ids=$(psql -At "$URL" -c "SELECT string_agg(id::text, ', ' ORDER BY id) FROM place
  WHERE ST_DWithin(location, ST_GeomFromGeoJSON('{\"type\":\"Point\",\"coordinates\":[2.35,48.85]}')::geography, $DISTANCE)")
rows=$(awk -F', ' '{print NF}' <<<"$ids")
plain_where="{id: {_in: [$ids]}}"
for k in spatial plain spatial_text plain_text; do
  case $k in
    spatial) q="{ place(where: $spatial_where, order_by: {id: asc}) { id name location } }";;
    plain) q="{ place(where: $plain_where, order_by: {id: asc}) { id name location } }";;
    spatial_text) q="{ place(where: $spatial_where, order_by: {id: asc}) { id name } }";;
    plain_text) q="{ place(where: $plain_where, order_by: {id: asc}) { id name } }";;
  esac
  python3 -c 'import json, sys; json.dump({"query": sys.argv[1], "variables": [{}]}, open(sys.argv[2], "w"))' "$q" "$WORK/$k.json"
done
# The same rows both ways, before anything is measured.
python3 - "$url" "$WORK" "$rows" <<'PY'
import json, sys, urllib.request
url, work, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
def answer(k):
    doc = json.load(open(f"{work}/{k}.json"))
    req = urllib.request.Request(url, json.dumps({"query": doc["query"]}).encode(), {"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))["data"]["place"]
assert answer("spatial") == answer("plain") and len(answer("plain")) == rows, "answers differ"
assert answer("spatial_text") == answer("plain_text"), "answers differ"
PY

cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)
results="$WORK/runs.tsv"; : >"$results"
echo "PostGIS filter vs the plain list of the same $rows rows (of $POINTS); $CONNS connections; ${DURATION} s per run; $ROUNDS rounds"
printf '%-6s %-13s %8s %9s %9s %11s\n' round run rps p50_ms p95_ms cpu_us_req
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order=(spatial plain spatial_text plain_text); else order=(plain_text spatial_text plain spatial); fi
  for run in "${order[@]}"; do
    before=$(cpu_ticks "$gpid")
    "$LOADGEN" --url "$url" --doc "$WORK/$run.json" --mode closed --connections "$CONNS" --duration "$DURATION" >"$WORK/out.json"
    after=$(cpu_ticks "$gpid")
    python3 - "$WORK/out.json" "$r" "$run" "$before" "$after" "$TCK" "$DURATION" >>"$results" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r, run, before, after, tck, dur = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
requests = max(d["rps"] * dur, 1)
print("%s\t%s\t%.0f\t%.3f\t%.3f\t%.1f\t%d" % (r, run, d["rps"], d["p50"], d["p95"], (after - before) / tck / requests * 1e6, d["failed"]))
PY
    IFS=$'\t' read -r _ _ rps p50 p95 cpu _ < <(tail -1 "$results")
    printf '%-6s %-13s %8s %9s %9s %11s\n' "$r" "$run" "$rps" "$p50" "$p95" "$cpu"
  done
done
python3 - "$results" <<'PY'
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
def med(run, i): return st.median(float(r[i]) for r in rows if r[1] == run)
print("medians: run rps p50_ms p95_ms cpu_us_req")
for run in ("spatial", "plain", "spatial_text", "plain_text"):
    print(f"  {run:13} {med(run, 2):8.0f} {med(run, 3):9.3f} {med(run, 4):9.3f} {med(run, 5):11.1f}")
for a, b in (("spatial", "plain"), ("spatial_text", "plain_text")):
    print(f"{a}/{b}: rps {med(a, 2) / med(b, 2):.2f}x, p50 {med(a, 3) / med(b, 3):.2f}x")
print(f"GeoJSON output: plain/plain_text rps {med('plain', 2) / med('plain_text', 2):.2f}x")
if sum(int(r[6]) for r in rows):
    print("FAIL: failed requests"); sys.exit(1)
PY
