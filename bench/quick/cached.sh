#!/usr/bin/env bash
# What `@cached` buys on a lookup by key (issue 35): a throwaway PostgreSQL, ROWS
# rows of `item`, one `grafton serve`; per round, CONNS connections closed loop
# for DURATION s each, in alternating order, over the same KEYS keys:
#   uncached  { item_by_pk(id: $id) { id name } }
#   cached    query ($id: Int!) @cached(ttl: 300) { item_by_pk(id: $id) { id name } }
# Both answer the same bytes (checked first). Medians and the ratio. Then how
# long a write stays invisible to cached readers (commit -> first fresh answer
# from instance A, WRITES times each): written through a second instance B, and
# by psql with `grafton live-triggers` installed, while CONNS connections keep
# reading @cached answers from A.
#   bench/quick/cached.sh
#   GRAFTON=… LOADGEN=… ROWS=100000 KEYS=1000 WRITES=100 ROUNDS=3 DURATION=10 CONNS=20 bench/quick/cached.sh
set -euo pipefail
ROWS=${ROWS:-100000}
KEYS=${KEYS:-1000}
WRITES=${WRITES:-100}
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
same_answers uncached cached

run_rounds "A lookup by key, uncached and @cached ($KEYS keys of $ROWS rows)" uncached cached
report cached/uncached
curl -s "$base/pro/cache/metrics"; echo

# Staleness: a second instance, the triggers, readers on A, then timed writes.
"$GRAFTON" live-triggers --database-url "$URL" | psql -q -v ON_ERROR_STOP=1 "$URL"
a=$base
serve_grafton
b=$base
"$LOADGEN" --url "$(cat "$WORK/cached.url")" --doc "$WORK/cached.json" --mode closed \
  --connections "$CONNS" --duration 600 >"$WORK/background.json" 2>&1 &
loader=$!; pids+=("$loader")
sleep 2
python3 - "$a" "$b" "$URL" "$WRITES" <<'PY'
import json, statistics as st, subprocess, sys, time, urllib.request
a, b, url, writes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def post(base, query, variables=None):
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    req = urllib.request.Request(base + "/v1/graphql", body, {"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))
read = "query @cached(ttl: 300) { item_by_pk(id: 1) { name } }"
def fresh_after(name):
    started = time.perf_counter()
    while post(a, read)["data"]["item_by_pk"]["name"] != name:
        if time.perf_counter() - started > 10:
            raise SystemExit(f"{name} never seen")
    return (time.perf_counter() - started) * 1000
def report(how, delays):
    delays.sort()
    p95 = delays[max(0, int(len(delays) * 0.95) - 1)]
    print(f"{how}: {len(delays)} writes; invisible for p50 {st.median(delays):.1f} ms, p95 {p95:.1f} ms, max {delays[-1]:.1f} ms")
post(a, read); post(a, read)
through_b, through_psql = [], []
for i in range(writes):
    name = f"b-{i}"
    post(b, "mutation ($n: String!) { update_item_by_pk(pk_columns: {id: 1}, _set: {name: $n}) { id } }", {"n": name})
    through_b.append(fresh_after(name))
    name = f"psql-{i}"
    subprocess.run(["psql", "-q", url, "-c", f"UPDATE item SET name = '{name}' WHERE id = 1"], check=True)
    through_psql.append(fresh_after(name))
report("written through instance B", through_b)
report("written by psql (live triggers)", through_psql)
PY
kill "$loader" 2>/dev/null || true
curl -s "$a/pro/cache/metrics"; echo