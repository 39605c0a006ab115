#!/usr/bin/env bash
# What a Relay page costs against the plain list of the same rows (issue 34).
# A throwaway PostgreSQL, ROWS rows of `item`, one `grafton serve`; per round,
# CONNS connections closed loop for DURATION s each, in alternating order:
#   relay_first   /v1beta1/relay { item_connection(first: 50) { pageInfo { endCursor hasNextPage } edges { cursor node { id name } } } }
#   plain_first   /v1/graphql    { item(limit: 50, order_by: {id: asc}) { id name } }
#   relay_deep    the page after the cursor of row DEEP (a variable)
#   plain_deep    { item(where: {id: {_gt: DEEP}}, limit: 50, order_by: {id: asc}) { id name } }
#   offset_deep   { item(offset: DEEP, limit: 50, order_by: {id: asc}) { id name } }
# Each pair answers the same rows (checked first). Medians and the ratios.
#   bench/quick/relay.sh
#   GRAFTON=… LOADGEN=… ROWS=100000 DEEP=90000 ROUNDS=3 DURATION=10 CONNS=10 bench/quick/relay.sh
set -euo pipefail
ROWS=${ROWS:-100000}
DEEP=${DEEP:-90000}
source "$(dirname "$0")/events_pg.sh"
source "$(dirname "$0")/compare.sh"
start_events_pg grafton-relay

psql -q -v ON_ERROR_STOP=1 "$URL" <<SQL
CREATE TABLE item (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO item SELECT i, 'item ' || i FROM generate_series(1, $ROWS) i;
ANALYZE item;
SQL
serve_grafton

cursor=$(python3 -c 'import base64, sys; print(base64.b64encode(("{\"id\" : %s}" % sys.argv[1]).encode()).decode())' "$DEEP")
page='pageInfo { endCursor hasNextPage } edges { cursor node { id name } }'
write_doc relay_first v1beta1/relay "{ item_connection(first: 50) { $page } }"
write_doc plain_first v1/graphql "{ item(limit: 50, order_by: {id: asc}) { id name } }"
write_doc relay_deep v1beta1/relay "query(\$c: String) { item_connection(first: 50, after: \$c) { $page } }" "[{\"c\": \"$cursor\"}]"
write_doc plain_deep v1/graphql "{ item(where: {id: {_gt: $DEEP}}, limit: 50, order_by: {id: asc}) { id name } }"
write_doc offset_deep v1/graphql "{ item(offset: $DEEP, limit: 50, order_by: {id: asc}) { id name } }"
# The same rows each way, before anything is measured.
python3 - "$WORK" <<'PY'
import json, sys, urllib.request
work = sys.argv[1]
def answer(k):
    doc = json.load(open(f"{work}/{k}.json"))
    body = json.dumps({"query": doc["query"], "variables": doc["variables"][0]}).encode()
    req = urllib.request.Request(open(f"{work}/{k}.url").read().strip(), body, {"content-type": "application/json"})
    data = json.load(urllib.request.urlopen(req))["data"]
    if "item_connection" in data:
        c = data["item_connection"]
        assert c["pageInfo"]["hasNextPage"], c["pageInfo"]
        return [{"name": e["node"]["name"]} for e in c["edges"]]
    return [{"name": r["name"]} for r in data["item"]]
assert answer("relay_first") == answer("plain_first") and len(answer("plain_first")) == 50
assert answer("relay_deep") == answer("plain_deep") == answer("offset_deep")
PY

run_rounds "A Relay page of 50 against the plain list of the same rows (of $ROWS; deep: after row $DEEP)" \
  relay_first plain_first relay_deep plain_deep offset_deep
report relay_first/plain_first relay_deep/plain_deep relay_deep/offset_deep
