#!/usr/bin/env bash
# What a metadata change costs, and how soon another instance serves it (issue 31).
#   bench/quick/metadata_sync.sh
#   GRAFTON=… TABLES=100 CHANGES=40 bench/quick/metadata_sync.sh
# Starts a throwaway PostgreSQL (initdb + pg_ctl in a temp dir), creates TABLES
# tables (each with a foreign key to the one before it, so relationships too), and
# two `grafton serve` instances A and B on it, keeping their metadata in the
# database (the default). Then CHANGES times, alternately: through A, create (or
# drop) role `r`'s select permission on one table; measure how long A took to
# answer (the change built, stored, served) and how long until B serves it (a
# query as `r` on B, asked every 5 ms, flips), from the moment A was asked.
# Prints p50 and p95 of both, and the resource_version each instance serves at the
# end. Everything is stopped and removed on exit.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
GRAFTON=${GRAFTON:-$TARGET/release/grafton}
TABLES=${TABLES:-100}
CHANGES=${CHANGES:-40}
[[ -x $GRAFTON ]] || (cd "$ROOT" && cargo build --release -p grafton)
PGBIN=$(pg_config --bindir 2>/dev/null || dirname "$(command -v initdb)")
# WORK=dir keeps the servers' logs there (GRAFTON_LOG=grafton_engine=debug adds
# each build's introspection and build times).
if [[ -n ${WORK:-} ]]; then mkdir -p "$WORK"; keep=1; else WORK=$(mktemp -d /tmp/grafton-metadata-sync.XXXXXX); keep=0; fi
PGDATA="$WORK/pgdata"
AS_PG=()
if [[ $(id -u) -eq 0 ]]; then AS_PG=(runuser -u postgres --); chown postgres "$WORK"; fi
pids=()
cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  [[ -f "$PGDATA/postmaster.pid" ]] && "${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1
  if [[ $keep == 1 ]]; then rm -rf "$PGDATA"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PGPORT=$(free_port)
"${AS_PG[@]}" "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --no-instructions >"$WORK/initdb.log" 2>&1
"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$WORK/postgres.log" -w start \
  -o "-p $PGPORT -k $WORK -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off" >/dev/null
URL="postgres://postgres@127.0.0.1:$PGPORT/sync"
psql -q -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:$PGPORT/postgres" -c "CREATE DATABASE sync"
python3 - "$TABLES" >"$WORK/schema.sql" <<'PY'
import sys
n = int(sys.argv[1])
for i in range(1, n + 1):
    fk = f", parent int REFERENCES t{i-1:03d} (id)" if i > 1 else ""
    print(f"CREATE TABLE t{i:03d} (id int PRIMARY KEY, label text{fk});")
    print(f"INSERT INTO t{i:03d} (id, label) VALUES (1, 'one');")
PY
psql -q -v ON_ERROR_STOP=1 "$URL" -f "$WORK/schema.sql" >/dev/null

start() { # NAME: a server; prints its port
  local port; port=$(free_port)
  "$GRAFTON" serve --database-url "$URL" --host 127.0.0.1 --port "$port" --admin-secret s \
    >"$WORK/$1.log" 2>&1 &
  pids+=($!)
  echo "$port"
}
A=$(start a); B=$(start b)
python3 - "$A" "$B" "$TABLES" "$CHANGES" <<'PY'
import json, sys, time, urllib.request, statistics
a, b, tables, changes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def post(port, path, body, headers=None):
    h = {"content-type": "application/json", "x-hasura-admin-secret": "s", **(headers or {})}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
def up(port):
    for _ in range(600):
        try:
            if post(port, "/v1/graphql", {"query": "{ __typename }"})[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"server on {port} did not start")
up(a); up(b)
# A first change stores the document of what is served (every table tracked).
assert post(a, "/v1/metadata", {"type": "export_metadata", "args": {}})[0] == 200
served_by_a, served_by_b = [], []
for i in range(changes):
    table = f"t{(i // 2) % tables + 1:03d}"
    create = i % 2 == 0
    kind = "pg_create_select_permission" if create else "pg_drop_select_permission"
    args = {"table": table, "role": "r"}
    if create:
        args["permission"] = {"columns": ["id"], "filter": {}}
    t0 = time.perf_counter()
    status, body = post(a, "/v1/metadata", {"type": kind, "args": args})
    t1 = time.perf_counter()
    assert status == 200, body
    q = {"query": f"{{ {table} {{ id }} }}"}
    while True:
        _, ans = post(b, "/v1/graphql", q, {"x-hasura-role": "r"})
        if ("data" in ans and ans["data"] is not None) == create:
            break
        if time.perf_counter() - t0 > 30:
            sys.exit(f"B did not follow change {i} in 30 s")
        time.sleep(0.005)
    served_by_a.append((t1 - t0) * 1000)
    served_by_b.append((time.perf_counter() - t0) * 1000)
def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
print(f"tables={tables} changes={changes}")
print(f"A answers the change (built, stored, served): p50 {p(served_by_a, .5):.0f} ms, p95 {p(served_by_a, .95):.0f} ms")
print(f"B serves it, from A being asked:             p50 {p(served_by_b, .5):.0f} ms, p95 {p(served_by_b, .95):.0f} ms")
PY
for port in "$A" "$B"; do
  curl -s -H 'x-hasura-admin-secret: s' "http://127.0.0.1:$port/metrics" | grep '^grafton_metadata_resource_version'
done
