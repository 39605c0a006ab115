#!/usr/bin/env bash
# What an event trigger costs the writer, part by part (issue 32): pgbench single-row
# inserts into tables of the same columns, with no trigger, with Grafton's trigger
# function as Grafton installs it, and with variants of that function (its text from
# pg_get_functiondef, edited): `no_notify` (as installed: no `PERFORM pg_notify(…)`),
# `no_definer` (a per-row `pg_notify`, as Grafton's first function had, but no
# `SECURITY DEFINER` and `SET search_path`), `bare` (neither). Grafton creates the trigger and is
# stopped before the rounds, so only the database's work is measured.
#   GRAFTON=… bench/quick/events_trigger_cost.sh
#   CLIENTS=8 SECS=10 ROUNDS=3 (defaults)
# Prints inserts/s per variant and round, then the medians and each over `plain`.
set -euo pipefail
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
source "$(dirname "$0")/events_pg.sh"
# The bench suite's settings (bench/lib/run_setup.py).
start_events_pg grafton-trigger-cost "-c full_page_writes=off -c max_connections=300 \
  -c shared_buffers=256MB"
VARIANTS=(plain grafton no_notify no_definer bare)
for v in "${VARIANTS[@]}"; do
  psql -q -v ON_ERROR_STOP=1 "$URL" -c "CREATE TABLE t_$v (id bigserial PRIMARY KEY, run int NOT NULL,
    total numeric NOT NULL, note text NOT NULL, at timestamptz NOT NULL DEFAULT now())"
  echo "INSERT INTO t_$v (run, total, note) VALUES (1, 12.5, 'order');" >"$WORK/$v.sql"
done

# Grafton installs its trigger on t_grafton, then stops.
GPORT=$(free_port)
"$GRAFTON" serve --database-url "$URL" --host 127.0.0.1 --port "$GPORT" >"$WORK/grafton.log" 2>&1 & gpid=$!; pids+=($gpid)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$GPORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$GPORT/v1/metadata" -d '{"type": "pg_create_event_trigger", "args": {"name": "cost",
  "table": "t_grafton", "webhook": "http://127.0.0.1:9/", "insert": {"columns": "*"}}}' >/dev/null
kill "$gpid"; wait "$gpid" 2>/dev/null || true; pids=()

# Its function's text, edited into the variants, each on its own table.
psql -At "$URL" -c "SELECT pg_get_functiondef('grafton_catalog.grafton_event_cost'::regproc)" >"$WORK/fn.sql"
python3 - "$WORK" <<'PY'
import re, sys
work = sys.argv[1]
fn = open(f"{work}/fn.sql").read()
def variant(name, notify, definer):
    text = fn.replace("grafton_event_cost", f"grafton_event_{name}")
    # Grafton's function notifies nothing since the per-row notification was
    # measured here (it cost a third of the inserts): the variants add it back.
    text = re.sub(r"\s*PERFORM pg_notify\([^;]*\);", "", text)
    if notify:
        text, n = re.subn(r"(\n\s*RETURN NULL;)", r"\n  PERFORM pg_notify('grafton_events', '');\1", text, count=1)
        assert n == 1, "no RETURN NULL in the function"
    if not definer:
        text, n = re.subn(r"\s*SECURITY DEFINER", "", text)
        text, m = re.subn(r"\n\s*SET search_path[^\n]*", "", text)
        assert n == 1 and m == 1, "no SECURITY DEFINER / SET search_path in the function"
    return (text.rstrip().rstrip(";") + ";\n"
            f"CREATE TRIGGER grafton_event_{name} AFTER INSERT ON public.t_{name} FOR EACH ROW "
            f"EXECUTE FUNCTION grafton_catalog.grafton_event_{name}();\n")
with open(f"{work}/variants.sql", "w") as f:
    f.write(variant("no_notify", False, True) + variant("no_definer", True, False) + variant("bare", False, False))
PY
psql -q -v ON_ERROR_STOP=1 "$URL" -f "$WORK/variants.sql"

echo "pgbench -n -M prepared -c $CLIENTS -j 2 -T $SECS, single-row inserts; $ROUNDS rounds, the order rotating"
: >"$WORK/tps"
n=${#VARIANTS[@]}
for r in $(seq 0 $((ROUNDS - 1))); do
  for i in $(seq 0 $((n - 1))); do
    v=${VARIANTS[$(((r + i) % n))]}
    tps=$(pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECS" -f "$WORK/$v.sql" "$URL" 2>&1 |
      sed -n 's/^tps = \([0-9.]*\).*/\1/p' | tail -1)
    echo "round $((r + 1)) $v $tps" | tee -a "$WORK/tps"
  done
done
python3 - "$WORK/tps" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for _, _, v, tps in rows:
    by.setdefault(v, []).append(float(tps))
base = statistics.median(by["plain"])
for v, xs in by.items():
    m = statistics.median(xs)
    print(f"{v:11} median {m:8.0f} inserts/s (min {min(xs):.0f}, max {max(xs):.0f}); / plain {m / base:.2f}")
PY
