#!/usr/bin/env bash
# What an event trigger costs the writer, part by part (issue 32): pgbench inserts into
# tables of the same columns, with no trigger (`plain`), with Grafton's trigger function
# as Grafton installs it (`grafton`), and with variants of that function (its text from
# pg_get_functiondef, edited), each on its own table:
#   no_notify   as installed (no `PERFORM pg_notify(…)`; Grafton's first function had one)
#   no_definer  a per-row `pg_notify`, but no `SECURITY DEFINER` and `SET search_path`
#   bare        neither
#   noop        a PL/pgSQL trigger that only returns: the call alone
#   bigid       the function writing into a copy of event_log keyed by a bigserial, not a uuid
#   stmt        one statement-level trigger with a transition table (`INSERT … SELECT`)
# Grafton creates the trigger and is stopped before the rounds, so only the database's
# work is measured.
#   GRAFTON=… bench/quick/events_trigger_cost.sh
#   CLIENTS=8 SECS=10 ROUNDS=3 (defaults); ROWS=100 for 100-row inserts (default 1)
# Prints inserts/s per variant and round, then the medians and each over `plain`.
set -euo pipefail
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
ROWS=${ROWS:-1}
source "$(dirname "$0")/events_pg.sh"
# The bench suite's settings (bench/lib/run_setup.py).
start_events_pg grafton-trigger-cost "-c full_page_writes=off -c max_connections=300 \
  -c shared_buffers=256MB"
VARIANTS=(plain grafton no_notify no_definer bare noop bigid stmt)
for v in "${VARIANTS[@]}"; do
  psql -q -v ON_ERROR_STOP=1 "$URL" -c "CREATE TABLE t_$v (id bigserial PRIMARY KEY, run int NOT NULL,
    total numeric NOT NULL, note text NOT NULL, at timestamptz NOT NULL DEFAULT now())"
  if [[ $ROWS == 1 ]]; then
    echo "INSERT INTO t_$v (run, total, note) VALUES (1, 12.5, 'order');" >"$WORK/$v.sql"
  else
    echo "INSERT INTO t_$v (run, total, note) SELECT 1, g * 1.5, 'order ' || g FROM generate_series(1, $ROWS) g;" \
      >"$WORK/$v.sql"
  fi
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
def trigger(name, level="ROW", transition=""):
    return (f"CREATE TRIGGER grafton_event_{name} AFTER INSERT ON public.t_{name} {transition} "
            f"FOR EACH {level} EXECUTE FUNCTION grafton_catalog.grafton_event_{name}();\n")
# A copy of event_log whose key is a bigserial, with the same pending index.
bigid = variant("no_notify", False, True).replace("grafton_event_no_notify", "grafton_event_bigid")
bigid = bigid.replace("public.t_no_notify", "public.t_bigid").replace("grafton_catalog.event_log", "grafton_catalog.log_bigid")
bigid = ("CREATE TABLE grafton_catalog.log_bigid (LIKE grafton_catalog.event_log INCLUDING DEFAULTS);\n"
         "ALTER TABLE grafton_catalog.log_bigid DROP COLUMN id, ADD COLUMN id bigserial PRIMARY KEY;\n"
         "CREATE INDEX ON grafton_catalog.log_bigid (created_at) WHERE NOT delivered AND NOT dead;\n" + bigid)
noop = ("CREATE FUNCTION grafton_catalog.grafton_event_noop() RETURNS trigger LANGUAGE plpgsql "
        "AS $$ BEGIN RETURN NULL; END $$;\n" + trigger("noop"))
# The installed function's insert, once per statement over its transition table.
stmt = ("""CREATE FUNCTION grafton_catalog.grafton_event_stmt() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ BEGIN
  INSERT INTO grafton_catalog.event_log
    (trigger_name, schema_name, table_name, op, data, session, trace_context)
  SELECT 'cost', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP, jsonb_build_object('old', NULL, 'new', to_jsonb(n)),
    nullif(current_setting('grafton.session', true), '')::jsonb,
    nullif(current_setting('grafton.trace', true), '')::jsonb
  FROM new_rows n;
  RETURN NULL;
END $$;
""" + trigger("stmt", "STATEMENT", "REFERENCING NEW TABLE AS new_rows"))
with open(f"{work}/variants.sql", "w") as f:
    f.write(variant("no_notify", False, True) + variant("no_definer", True, False) + variant("bare", False, False)
            + noop + bigid + stmt)
PY
psql -q -v ON_ERROR_STOP=1 "$URL" -f "$WORK/variants.sql"

echo "pgbench -n -M prepared -c $CLIENTS -j 2 -T $SECS, $ROWS-row inserts; $ROUNDS rounds, the order rotating"
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
