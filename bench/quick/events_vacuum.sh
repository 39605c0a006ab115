#!/usr/bin/env bash
# Does the event log's dead rows cost delivery (issue 32)? With autovacuum off:
# ROUNDS runs of EVENTS events each (100-row inserts, pgbench, 2 clients) delivered
# by one `grafton serve` (default flags) to bench/quick/events_receiver.cjs, one after
# the other in the same database, then `VACUUM grafton_catalog.event_log` and one run
# more. Per run: events/s (first capture to last `delivered_at`), PostgreSQL's and
# Grafton's CPU per 1,000 events (/proc), and event_log's dead rows before the run.
#   GRAFTON=… bench/quick/events_vacuum.sh        # EVENTS=50000 ROUNDS=4
#   FILLFACTOR=100 …   the log's fill factor set after Grafton made it (Grafton's: 50)
set -euo pipefail
EVENTS=${EVENTS:-50000}
ROUNDS=${ROUNDS:-4}
source "$(dirname "$0")/events_pg.sh"
# The bench suite's settings (bench/lib/run_setup.py), autovacuum off.
start_events_pg grafton-events-vacuum "-c full_page_writes=off -c max_connections=300 \
  -c shared_buffers=256MB -c autovacuum=off"
psql -q -v ON_ERROR_STOP=1 "$URL" -c "CREATE TABLE orders (id bigserial PRIMARY KEY, run int NOT NULL,
  total numeric NOT NULL, note text NOT NULL)"
echo "INSERT INTO orders (run, total, note) SELECT :run, g * 1.5, 'order ' || g FROM generate_series(1, 100) g;" \
  >"$WORK/batch.sql"
HOOK_PORT=$(free_port)
node "$HERE/events_receiver.cjs" "$HOOK_PORT" & pids+=($!)
GPORT=$(free_port)
"$GRAFTON" serve --database-url "$URL" --host 127.0.0.1 --port "$GPORT" >"$WORK/grafton.log" 2>&1 & gpid=$!
pids+=($gpid)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$GPORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$GPORT/v1/metadata" -d "{\"type\": \"pg_create_event_trigger\", \"args\": {\"name\": \"placed\",
  \"table\": \"orders\", \"webhook\": \"http://127.0.0.1:$HOOK_PORT/\", \"insert\": {\"columns\": \"*\"}}}" >/dev/null
if [[ -n ${FILLFACTOR:-} ]]; then
  psql -q -v ON_ERROR_STOP=1 "$URL" -c "ALTER TABLE grafton_catalog.event_log SET (fillfactor = $FILLFACTOR)"
fi
PM=$(head -1 "$PGDATA/postmaster.pid")
ticks() { python3 -c "import sys; sys.path.insert(0, '$ROOT/bench/lib'); import procs; print(procs.tree_cpu_ticks($1))"; }
TCK=$(getconf CLK_TCK)
run() {  # run number, label
  local dead p0 g0 p1 g1
  dead=$(psql -At "$URL" -c "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'grafton_catalog.event_log'::regclass")
  p0=$(ticks "$PM"); g0=$(ticks "$gpid")
  pgbench -n -M prepared -c 2 -j 2 -t $((EVENTS / 200)) -D run="$1" -f "$WORK/batch.sql" "$URL" >/dev/null 2>&1
  until [[ $(psql -At "$URL" -c "SELECT count(*) FROM grafton_catalog.event_log WHERE NOT delivered AND NOT dead") == 0 ]]; do
    sleep 0.1
  done
  p1=$(ticks "$PM"); g1=$(ticks "$gpid")
  psql -At -F ' ' "$URL" -c "SELECT count(*), extract(epoch FROM max(delivered_at) - min(created_at))
    FROM grafton_catalog.event_log WHERE data->'new'->>'run' = '$1'" | python3 -c "
import sys
n, span = sys.stdin.read().split()
n, span, tck = int(n), float(span), $TCK
print(f'run $1 ($2): dead rows before {int(\"$dead\"):>7,}; {n:,} events, {n / span:,.0f} events/s; '
      f'CPU per 1,000 events: PostgreSQL {1000 * ($p1 - $p0) / tck / n:.3f} s, Grafton {1000 * ($g1 - $g0) / tck / n:.3f} s')"
}
for r in $(seq 1 "$ROUNDS"); do run "$r" "no vacuum since the start"; done
psql -q "$URL" -c "VACUUM grafton_catalog.event_log"
run $((ROUNDS + 1)) "after VACUUM grafton_catalog.event_log"
