#!/usr/bin/env bash
# What `@cached` buys on the no-nest seed query (issue 35's target: >= 30,000 hits
# a second): a throwaway PostgreSQL with the demo data (ROWS rows), one `grafton
# serve --naming phrag`, and `venues` (50 rows a page, random `id_gt` and `offset`
# over KEYS variable sets) asked plainly and with `@cached(ttl: 300)`, CONNS
# connections closed loop, DURATION s per run, ROUNDS rounds in alternating order.
# Both answer the same bytes (checked first). Medians, the ratio, and the cache's
# own counts (hits, misses) from /pro/cache/metrics.
#   bench/quick/cached_seed.sh
#   GRAFTON=… LOADGEN=… ROWS=100000 KEYS=1000 ROUNDS=3 DURATION=10 CONNS=50 bench/quick/cached_seed.sh
set -euo pipefail
ROWS=${ROWS:-100000}
KEYS=${KEYS:-1000}
CONNS=${CONNS:-50}
SERVE_FLAGS="--naming phrag"
source "$(dirname "$0")/events_pg.sh"
source "$(dirname "$0")/compare.sh"
start_events_pg grafton-cached-seed "-c shared_buffers=256MB"
"$GRAFTON" demo --rows "$ROWS" --postgres-sql | psql -q -v ON_ERROR_STOP=1 "$URL" >/dev/null
psql -q "$URL" -c "VACUUM ANALYZE"
serve_grafton

# The seed query, and the same with the directive after its variables.
python3 - "$ROOT" "$WORK" "$base" "$KEYS" "$ROWS" <<'PY'
import json, os, random, sys
root, work, base, keys, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, os.path.join(root, "bench/pgbench"))
from make_scripts import CEILING_QUERIES
plain = CEILING_QUERIES["venues"]
head, body = plain.split(") {", 1)
r = random.Random(35)
sets = [{"limit": 50, "offset": r.randrange(50), "id_gt": r.randrange(rows)} for _ in range(keys)]
for name, query in (("uncached", plain), ("cached", head + ") @cached(ttl: 300) {" + body)):
    json.dump({"query": query, "variables": sets}, open(f"{work}/{name}.json", "w"))
    open(f"{work}/{name}.url", "w").write(base + "/v1/graphql\n")
PY
same_answers uncached cached '"venues":[{'

run_rounds "venues (50 rows), uncached and @cached ($KEYS variable sets)" uncached cached
report cached/uncached
curl -s "$base/pro/cache/metrics"; echo
