#!/usr/bin/env bash
# What `@cached` buys on a lookup by key (issue 35): a throwaway PostgreSQL, ROWS
# rows of `item`, one `grafton serve`; per round, CONNS connections closed loop
# for DURATION s each, in alternating order, over the same KEYS keys:
#   uncached  { item_by_pk(id: $id) { id name } }
#   cached    query ($id: Int!) @cached(ttl: 300) { item_by_pk(id: $id) { id name } }
# Both answer the same bytes (checked first). Medians and the ratio.
#   bench/quick/cached.sh
#   GRAFTON=… LOADGEN=… ROWS=100000 KEYS=1000 ROUNDS=3 DURATION=10 CONNS=20 bench/quick/cached.sh
set -euo pipefail
ROWS=${ROWS:-100000}
KEYS=${KEYS:-1000}
CONNS=${CONNS:-20}
source "$(dirname "$0")/events_pg.sh"
source "$(dirname "$0")/compare.sh"
start_events_pg grafton-cached

psql -q -v ON_ERROR_STOP=1 "$URL" <<SQL
CREATE TABLE item (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO item SELECT i, 'item ' || i FROM generate_series(1, $ROWS) i;
ANALYZE item;
SQL
serve_grafton

vars=$(python3 -c 'import json, sys; print(json.dumps([{"id": i * 37 % int(sys.argv[2]) + 1} for i in range(int(sys.argv[1]))]))' "$KEYS" "$ROWS")
write_doc uncached v1/graphql 'query ($id: Int!) { item_by_pk(id: $id) { id name } }' "$vars"
write_doc cached v1/graphql 'query ($id: Int!) @cached(ttl: 300) { item_by_pk(id: $id) { id name } }' "$vars"
python3 - "$WORK" <<'PY'
import json, sys, urllib.request
work = sys.argv[1]
def answer(k, v):
    doc = json.load(open(f"{work}/{k}.json"))
    body = json.dumps({"query": doc["query"], "variables": doc["variables"][v]}).encode()
    req = urllib.request.Request(open(f"{work}/{k}.url").read().strip(), body, {"content-type": "application/json"})
    return urllib.request.urlopen(req).read()
for v in (0, 1, 2):
    assert answer("uncached", v) == answer("cached", v) == answer("cached", v), v
PY

run_rounds "A lookup by key, uncached and @cached ($KEYS keys of $ROWS rows)" uncached cached
report cached/uncached
curl -s "$base/pro/cache/metrics"; echo
