#!/usr/bin/env bash
# The other way to capture (issue 32): what logical decoding costs the writer, for
# comparison with the trigger (bench/quick/events_trigger_cost.sh). A cluster with
# wal_level=logical and a test_decoding slot; pgbench single-row inserts with no one
# reading the slot (`plain`, the slot emptied first), then with a loop reading it as
# fast as it can (`decoded`), which is the least a WAL-based capture does before it
# writes a single event. Prints inserts/s per round and the changes left unread (three
# per insert: BEGIN, INSERT, COMMIT).
#   bench/quick/events_wal_cost.sh            # CLIENTS=8 SECS=8 ROUNDS=3
set -euo pipefail
CLIENTS=${CLIENTS:-8}
SECS=${SECS:-8}
ROUNDS=${ROUNDS:-3}
source "$(dirname "$0")/events_pg.sh"
start_events_pg grafton-wal-cost "-c full_page_writes=off -c max_connections=300 \
  -c shared_buffers=256MB -c wal_level=logical -c max_replication_slots=4 -c max_wal_senders=4"
psql -q -v ON_ERROR_STOP=1 "$URL" -c "CREATE TABLE t (id bigserial PRIMARY KEY, run int NOT NULL,
  total numeric NOT NULL, note text NOT NULL, at timestamptz NOT NULL DEFAULT now())"
echo "INSERT INTO t (run, total, note) VALUES (1, 12.5, 'order');" >"$WORK/insert.sql"
psql -qAt "$URL" -c "SELECT pg_create_logical_replication_slot('cost', 'test_decoding')" >/dev/null
changes() { psql -qAt "$URL" -c "SELECT count(*) FROM pg_logical_slot_$1_changes('cost', NULL, $2)"; }
: >"$WORK/tps"
for r in $(seq 1 "$ROUNDS"); do
  for v in plain decoded; do
    changes get NULL >/dev/null
    if [[ $v == decoded ]]; then
      rm -f "$WORK/stop"
      (until [[ -f $WORK/stop ]]; do changes get 20000 >/dev/null; done) & reader=$!
    fi
    tps=$(pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECS" -f "$WORK/insert.sql" "$URL" 2>&1 |
      sed -n 's/^tps = \([0-9.]*\).*/\1/p' | tail -1)
    # The reader's call in progress ends before the slot is looked at.
    [[ $v == decoded ]] && { touch "$WORK/stop"; wait "$reader"; }
    echo "round $r $v $tps inserts/s; changes left unread $(changes peek NULL)" | tee -a "$WORK/tps"
  done
done
python3 - "$WORK/tps" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    f = line.split()
    by.setdefault(f[2], []).append(float(f[3]))
base = statistics.median(by["plain"])
for v, xs in by.items():
    m = statistics.median(xs)
    print(f"{v:8} median {m:8.0f} inserts/s; / plain {m / base:.2f}")
PY
