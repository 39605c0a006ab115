#!/usr/bin/env bash
# Peak memory of `grafton serve` while clients subscribe to ~2 MB live answers and
# never read them (issue 27's live-query memory budget), for each budget given:
#   bench/quick/live_hogs.sh [BYTES...]    default: 268435456 (the default) 17179869184 (no bound in effect)
# CONNECTIONS (12) sockets with SUBSCRIPTIONS (100) subscriptions each, for DURATION
# seconds (20); VmRSS of the server is sampled every 0.2 s. Prints, per budget, the
# idle, peak and final RSS, and grafton_live_queued_bytes (/metrics) at the peak.
# VARY=1: each subscription has its own variable value (no two share an answer).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GRAFTON=${GRAFTON:-${CARGO_TARGET_DIR:-$ROOT/target}/release/grafton}
[[ -x $GRAFTON ]] || (cd "$ROOT" && cargo build --release -p grafton)
NODE_DIR=$ROOT/bench/.tools/node
[[ -d $NODE_DIR/node_modules/ws ]] || npm install --silent --prefix "$NODE_DIR" ws@8.18.3 >/dev/null
WORK=${WORK:-$(mktemp -d)}
PORT=${PORT:-18991}
CONNECTIONS=${CONNECTIONS:-12} SUBSCRIPTIONS=${SUBSCRIPTIONS:-100} DURATION=${DURATION:-20}
SECRET=hogs
budgets=("$@"); [[ ${#budgets[@]} -gt 0 ]] || budgets=(268435456 17179869184)
db=$WORK/blobs.db
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE IF NOT EXISTS blobs (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL)")
c.executemany("INSERT OR REPLACE INTO blobs VALUES (?, ?)", [(i, "x" * 100_000) for i in range(1, 21)])
c.commit()
PY
pid=""; hogs=""
trap '[[ -n $pid ]] && kill $pid 2>/dev/null; [[ -n $hogs ]] && kill $hogs 2>/dev/null; true' EXIT
metric() { curl -s -H "x-hasura-admin-secret: $SECRET" "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
for budget in "${budgets[@]}"; do
  "$GRAFTON" serve --database-url "$db" --port "$PORT" --admin-secret "$SECRET" \
    --live-query-max-bytes "$budget" >/dev/null 2>&1 & pid=$!
  until curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz"; do sleep 0.1; done
  idle=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
  NODE_PATH=$NODE_DIR/node_modules node "$ROOT/bench/quick/live_hogs.cjs" \
    "ws://127.0.0.1:$PORT/v1/graphql" "$SECRET" "$CONNECTIONS" "$SUBSCRIPTIONS" "$DURATION" & hogs=$!
  peak=0; queued_at_peak=0
  end=$(( $(date +%s) + DURATION ))
  while (( $(date +%s) < end )); do
    rss=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
    if (( rss > peak )); then peak=$rss; queued_at_peak=$(metric grafton_live_queued_bytes); fi
    sleep 0.2
  done
  wait $hogs 2>/dev/null || true; hogs=""
  sleep 2
  final=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
  echo "vary=${VARY:-0} budget_bytes=$budget connections=$CONNECTIONS subscriptions=$SUBSCRIPTIONS idle_rss_kb=$idle peak_rss_kb=$peak queued_bytes_at_peak=${queued_at_peak:-?} rss_2s_after_kb=$final"
  kill $pid; wait $pid 2>/dev/null || true; pid=""
done
