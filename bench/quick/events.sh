#!/usr/bin/env bash
# Event trigger throughput (issue 32): events delivered per second to a fast local
# webhook, and Grafton's CPU per event.
#   bench/quick/events.sh
#   GRAFTON=… EVENTS=20000 ROWS_PER_INSERT=100 bench/quick/events.sh
# Starts a throwaway PostgreSQL (initdb + pg_ctl in a temp dir), one `grafton
# serve` on it (default flags: pool of 100 webhook calls, batches of 100), a
# Node webhook that answers 200 to everything (events_receiver.cjs), creates an
# insert trigger on a table, then inserts EVENTS rows with psql in statements of
# ROWS_PER_INSERT rows, and times until the log says every event is delivered.
# Prints events/s (from the first insert to the last delivery), the insert time
# alone, and Grafton's CPU seconds per 1,000 events (utime+stime of its process).
set -euo pipefail
EVENTS=${EVENTS:-20000}
ROWS_PER_INSERT=${ROWS_PER_INSERT:-100}
source "$(dirname "$0")/events_pg.sh"
start_events_pg grafton-events-bench
psql -q -v ON_ERROR_STOP=1 "$URL" -c "CREATE TABLE orders (id int PRIMARY KEY, total numeric, note text)"

HOOK_PORT=$(free_port)
node "$HERE/events_receiver.cjs" "$HOOK_PORT" & pids+=($!)
GPORT=$(free_port)
"$GRAFTON" serve --database-url "$URL" --host 127.0.0.1 --port "$GPORT" --admin-secret s \
  >"$WORK/grafton.log" 2>&1 & gpid=$!; pids+=($gpid)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$GPORT/healthz" >/dev/null && break; sleep 0.1; done
curl -sf -H 'x-hasura-admin-secret: s' "http://127.0.0.1:$GPORT/v1/metadata" -d "{\"type\": \"pg_create_event_trigger\",
  \"args\": {\"name\": \"order_placed\", \"table\": \"orders\", \"webhook\": \"http://127.0.0.1:$HOOK_PORT/\",
  \"insert\": {\"columns\": \"*\"}}}" >/dev/null
cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)
python3 - "$EVENTS" "$ROWS_PER_INSERT" >"$WORK/inserts.sql" <<'PY'
import sys
n, per = int(sys.argv[1]), int(sys.argv[2])
for start in range(0, n, per):
    end = min(n, start + per) - 1
    print(f"INSERT INTO orders SELECT g, g * 1.5, 'order ' || g FROM generate_series({start}, {end}) g;")
PY
c0=$(cpu_ticks "$gpid"); t0=$(date +%s.%N)
psql -q -v ON_ERROR_STOP=1 "$URL" -f "$WORK/inserts.sql" >/dev/null
t1=$(date +%s.%N)
while true; do
  d=$(psql -At "$URL" -c "SELECT count(*) FROM grafton_catalog.event_log WHERE delivered")
  [[ $d -ge $EVENTS ]] && break
  sleep 0.05
done
t2=$(date +%s.%N); c1=$(cpu_ticks "$gpid")
received=$(curl -s "http://127.0.0.1:$HOOK_PORT/count")
python3 - "$EVENTS" "$t0" "$t1" "$t2" "$c0" "$c1" "$TCK" "$received" <<'PY'
import sys
n, t0, t1, t2, c0, c1, tck, got = sys.argv[1:]
n = int(n); t0, t1, t2 = float(t0), float(t1), float(t2)
cpu = (int(c1) - int(c0)) / int(tck)
print(f"events={n} webhook calls={got}")
print(f"inserts took {t1 - t0:.2f} s; every event delivered after {t2 - t0:.2f} s")
print(f"throughput: {n / (t2 - t0):.0f} events/s; Grafton CPU {cpu:.2f} s = {1000 * cpu / n:.3f} s per 1,000 events")
PY
