# Sourced by the event-trigger quick scripts: the release binary (built when
# missing), a throwaway PostgreSQL in a temp dir (initdb + pg_ctl, as the
# `postgres` user when run as root) with a database `events` at $URL, and a clean-up
# on exit that stops every PID in `pids` and the cluster. Call
#   start_events_pg <temp-dir prefix> [extra `-c name=value` server options]
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
GRAFTON=${GRAFTON:-$TARGET/release/grafton}
PGBIN=$(pg_config --bindir 2>/dev/null || dirname "$(command -v initdb)")
pids=()
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
events_cleanup() {
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  [[ -f "$PGDATA/postmaster.pid" ]] && "${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1
  rm -rf "$WORK"
}
start_events_pg() {
  [[ -x $GRAFTON ]] || (cd "$ROOT" && cargo build --release -p grafton)
  WORK=$(mktemp -d "/tmp/$1.XXXXXX")
  PGDATA="$WORK/pgdata"
  AS_PG=()
  if [[ $(id -u) -eq 0 ]]; then AS_PG=(runuser -u postgres --); chown postgres "$WORK"; fi
  trap events_cleanup EXIT INT TERM
  PGPORT=$(free_port)
  "${AS_PG[@]}" "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --no-instructions >"$WORK/initdb.log" 2>&1
  "${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$WORK/postgres.log" -w start -o "-p $PGPORT -k $WORK \
    -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off ${2:-}" >/dev/null
  URL="postgres://postgres@127.0.0.1:$PGPORT/events"
  psql -q -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:$PGPORT/postgres" -c "CREATE DATABASE events"
}
