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
DISTANCE=${DISTANCE:-450}
source "$(dirname "$0")/events_pg.sh"
source "$(dirname "$0")/compare.sh"
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
serve_grafton

from='{type: "Point", coordinates: [2.35, 48.85]}'
spatial_where="{location: {_st_d_within: {distance: $DISTANCE, from: $from}}}"
ids=$(psql -At "$URL" -c "SELECT string_agg(id::text, ', ' ORDER BY id) FROM place
  WHERE ST_DWithin(location, ST_GeomFromGeoJSON('{\"type\":\"Point\",\"coordinates\":[2.35,48.85]}')::geography, $DISTANCE)")
rows=$(awk -F', ' '{print NF}' <<<"$ids")
plain_where="{id: {_in: [$ids]}}"
write_doc spatial v1/graphql "{ place(where: $spatial_where, order_by: {id: asc}) { id name location } }"
write_doc plain v1/graphql "{ place(where: $plain_where, order_by: {id: asc}) { id name location } }"
write_doc spatial_text v1/graphql "{ place(where: $spatial_where, order_by: {id: asc}) { id name } }"
write_doc plain_text v1/graphql "{ place(where: $plain_where, order_by: {id: asc}) { id name } }"
# The same rows both ways, before anything is measured.
python3 - "$base/v1/graphql" "$WORK" "$rows" <<'PY'
import json, sys, urllib.request
url, work, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
def answer(k):
    doc = json.load(open(f"{work}/{k}.json"))
    req = urllib.request.Request(url, json.dumps({"query": doc["query"]}).encode(), {"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))["data"]["place"]
assert answer("spatial") == answer("plain") and len(answer("plain")) == rows, "answers differ"
assert answer("spatial_text") == answer("plain_text"), "answers differ"
PY

run_rounds "PostGIS filter vs the plain list of the same $rows rows (of $POINTS)" \
  spatial plain spatial_text plain_text
report spatial/plain spatial_text/plain_text plain/plain_text
