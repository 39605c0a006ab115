#!/usr/bin/env bash
# Multiplexed queries (issue 35): the seed queries on a throwaway PostgreSQL with
# the demo data (ROWS rows), served by two `grafton serve` side by side: `alone`
# (--query-batch-size 1: one statement per request, as before; it also turns off
# the caps of --query-concurrency, so batched/alone is multiplexing whole against
# none) and `batched` (the default, 32, and the default --query-concurrency, or
# QUERY_CONCURRENCY); and pgbench on the best hand-written SQL for the same answers
# (bench/pgbench/best/), over as many connections as clients and over BEST_FEW
# (default 5, at most the clients; empty or 0: not), since PostgreSQL on few cores
# answers more over a few connections than over one per client (`best_few`: the
# ceiling at its best concurrency). At each of CLIENTS, ROUNDS rounds in
# alternating order, DURATION s per run. Per run: req/s (tps for pgbench), p50,
# p95, Grafton's CPU per request (utime+stime from /proc over the run), the
# statements PostgreSQL ran per second (pg_stat_database's commits) and the mean
# batch. Both servers answer the same bytes (checked first). Medians, and
# batched/alone, batched/best and batched/best_few.
#   bench/quick/multiplexed.sh
#   GRAFTON=… LOADGEN=… ROWS=100000 CLIENTS="1 20 50" QUERIES="venues venue_meetups meetups_members" \
#     ROUNDS=3 DURATION=8 POOL=10 [QUERY_CONCURRENCY=5] BEST_FEW=5 bench/quick/multiplexed.sh
set -euo pipefail
ROWS=${ROWS:-100000}
CLIENTS=${CLIENTS:-1 20 50}
QUERIES=${QUERIES:-venues venue_meetups meetups_members}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
POOL=${POOL:-10}
BEST_FEW=${BEST_FEW-5}
source "$(dirname "$0")/events_pg.sh"
LOADGEN=${LOADGEN:-$TARGET/release/loadgen}
[[ -x $LOADGEN ]] || (cd "$ROOT" && cargo build --release -p grafton-bench-loadgen)
start_events_pg grafton-mux "-c max_connections=300 -c shared_buffers=256MB"
"$GRAFTON" demo --rows "$ROWS" --postgres-sql | psql -q -v ON_ERROR_STOP=1 "$URL" >/dev/null
psql -q "$URL" -c "VACUUM ANALYZE"

serve() { # NAME BATCH
  local port
  port=$(free_port)
  "$GRAFTON" serve --database-url "$URL" --naming phrag --pool-size "$POOL" --query-batch-size "$2" \
    ${QUERY_CONCURRENCY:+--query-concurrency "$QUERY_CONCURRENCY"} \
    --host 127.0.0.1 --port "$port" >"$WORK/$1.log" 2>&1 &
  pids+=("$!"); echo "$!" >"$WORK/$1.pid"; echo "http://127.0.0.1:$port" >"$WORK/$1.base"
  for _ in $(seq 300); do
    curl -s -H 'content-type: application/json' -d '{"query":"{ __typename }"}' "http://127.0.0.1:$port/v1/graphql" 2>/dev/null | grep -q data && return
    sleep 0.1
  done
  echo "grafton $1 did not start:"; cat "$WORK/$1.log"; exit 1
}
serve alone 1
serve batched 32

python3 - "$WORK" "$URL" "$LOADGEN" "$ROOT" "$CLIENTS" "$QUERIES" "$ROUNDS" "$DURATION" "${AS_PG[*]:-}" "$BEST_FEW" <<'PY'
import json, os, random, re, statistics as st, subprocess, sys, urllib.request
work, url, loadgen, root, clients, queries, rounds, duration, as_pg, best_few = sys.argv[1:11]
clients = [int(c) for c in clients.split()]
queries, rounds, duration = queries.split(), int(rounds), float(duration)
sys.path.insert(0, os.path.join(root, "bench/pgbench"))
from make_scripts import CEILING_QUERIES
tck = os.sysconf("SC_CLK_TCK")
base = {s: open(f"{work}/{s}.base").read().strip() for s in ("alone", "batched")}
pid = {s: int(open(f"{work}/{s}.pid").read()) for s in ("alone", "batched")}
rng = random.Random(35)
for q in queries:
    sets = [{"limit": 50, "offset": rng.randrange(50), "id_gt": rng.randrange(100000)} for _ in range(2000)]
    json.dump({"query": CEILING_QUERIES[q], "variables": sets}, open(f"{work}/{q}.json", "w"))
    for v in sets[:3]:
        body = json.dumps({"query": CEILING_QUERIES[q], "variables": v}).encode()
        answers = [urllib.request.urlopen(urllib.request.Request(
            base[s] + "/v1/graphql", body, {"content-type": "application/json"})).read() for s in base]
        assert answers[0] == answers[1] and b'"data"' in answers[0], (q, v)

def psql(sql):
    return subprocess.run(["psql", "-tAq", url, "-c", sql], check=True, capture_output=True, text=True).stdout.strip()
def commits():
    return int(psql("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"))
def cpu(p):
    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
def metric(s, name):
    text = urllib.request.urlopen(base[s] + "/metrics").read().decode()
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0

def run(system, q, c):
    before_x, before_cpu = commits(), cpu(pid[system]) if system in pid else 0
    if system.startswith("best"):
        c = min(c, int(best_few)) if system == "best_few" else c
        cmd = (as_pg.split() if as_pg else []) + ["pgbench", "-n", "-M", "prepared", "-c", str(c), "-j", str(min(c, 2)),
               "-T", str(int(duration)), "-f", os.path.join(root, f"bench/pgbench/best/{q}.sql"), url]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        tps = float(re.search(r"tps = ([\d.]+)", out).group(1))
        lat = float(re.search(r"latency average = ([\d.]+) ms", out).group(1))
        row = {"rps": tps, "p50": lat, "p95": float("nan"), "cpu": float("nan"), "batch": float("nan")}
    else:
        b0, r0 = metric(system, "grafton_query_batches_total"), metric(system, "grafton_query_batched_requests_total")
        out = subprocess.run([loadgen, "--url", base[system] + "/v1/graphql", "--doc", f"{work}/{q}.json",
                              "--mode", "closed", "--connections", str(c), "--duration", str(duration)],
                             check=True, capture_output=True, text=True).stdout
        d = json.loads(out)
        assert d["failed"] == 0, d
        requests = max(d["rps"] * duration, 1)
        b1, r1 = metric(system, "grafton_query_batches_total"), metric(system, "grafton_query_batched_requests_total")
        row = {"rps": d["rps"], "p50": d["p50"], "p95": d["p95"],
               "cpu": (cpu(pid[system]) - before_cpu) / tck / requests * 1e6,
               "batch": (r1 - r0) / (b1 - b0) if b1 > b0 else 1.0}
    row["stmts"] = (commits() - before_x) / duration
    return row

results = {}
best_few = best_few if best_few.strip() not in ("", "0") else ""
systems = ["alone", "batched", "best"] + (["best_few"] if best_few else [])
for c in clients:
    for q in queries:
        print(f"\n{q}, {c} client(s); {duration:.0f} s per run; {rounds} rounds")
        print(f"{'round':6} {'run':8} {'rps':>8} {'p50_ms':>8} {'p95_ms':>8} {'cpu_us':>7} {'stmts/s':>8} {'batch':>6}")
        for r in range(rounds):
            for s in (systems if r % 2 == 0 else systems[::-1]):
                row = run(s, q, c)
                results.setdefault((c, q, s), []).append(row)
                print(f"{r + 1:<6} {s:8} {row['rps']:8.0f} {row['p50']:8.2f} {row['p95']:8.2f} {row['cpu']:7.1f} {row['stmts']:8.0f} {row['batch']:6.1f}", flush=True)

print("\nmedians (pgbench: tps, p50 = its mean latency)")
print(f"{'clients':>7} {'query':16} {'run':8} {'rps':>8} {'p50_ms':>8} {'p95_ms':>8} {'cpu_us':>7} {'stmts/s':>8} {'batch':>6}")
med = lambda c, q, s, k: st.median(r[k] for r in results[(c, q, s)])
for (c, q, s) in results:
    print(f"{c:7} {q:16} {s:8} " + " ".join(f"{med(c, q, s, k):{w}.{p}f}" for k, w, p in
          (("rps", 8, 0), ("p50", 8, 2), ("p95", 8, 2), ("cpu", 7, 1), ("stmts", 8, 0), ("batch", 6, 1))))
print("\nratios of medians")
for c in clients:
    for q in queries:
        b, a, h = (med(c, q, s, "rps") for s in ("batched", "alone", "best"))
        few = f"  batched/best_few {b / med(c, q, 'best_few', 'rps'):.2f}" if best_few else ""
        print(f"{c:7} {q:16} batched/alone {b / a:.2f}  batched/best {b / h:.2f}  alone/best {a / h:.2f}  "
              f"p95 batched/alone {med(c, q, 'batched', 'p95') / med(c, q, 'alone', 'p95'):.2f}{few}")
PY
