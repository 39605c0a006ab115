# Sourced by the bench/quick scripts that load one `grafton serve`: the paths, the
# release binaries (built when missing), a work dir (WORK if given, kept; else a
# temp dir, removed) and the processes started (`pids+=(…)`), stopped on exit;
# and the helpers they share.
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
GRAFTON=${GRAFTON:-$TARGET/release/grafton}
LOADGEN=${LOADGEN:-$TARGET/release/loadgen}
[[ -x $GRAFTON ]] || (cd "$ROOT" && cargo build --release -p grafton)
[[ -x $LOADGEN ]] || (cd "$ROOT" && cargo build --release -p grafton-bench-loadgen)
if [[ -n ${WORK:-} ]]; then mkdir -p "$WORK"; keep=1; else WORK=$(mktemp -d); keep=0; fi

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ $keep == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
gql() { # URL JSON-BODY [curl args…]: the answer's body
  local url=$1 body=$2; shift 2
  curl -s -H 'content-type: application/json' "$@" -d "$body" "$url"
}
wait_up() { # URL PID NAME [curl args…]: until it answers (its log is $WORK/NAME.log)
  local url=$1 pid=$2 name=$3 i; shift 3
  for i in $(seq 300); do
    gql "$url" '{"query":"{ __typename }"}' "$@" 2>/dev/null | grep -q '"data"' && return 0
    kill -0 "$pid" 2>/dev/null || { echo "$name exited; its log:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$name did not answer in 30 s; its log:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1
}
demo_db() { # FILE ROWS: a SQLite demo file of ROWS rows per table
  local port pid
  port=$(free_port)
  "$GRAFTON" demo --file "$1" --rows "$2" --port "$port" >"$WORK/demo.log" 2>&1 & pid=$!; pids+=("$pid")
  wait_up "http://127.0.0.1:$port/v1/graphql" "$pid" demo
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
cpu_ticks() { awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }  # utime + stime
TCK=$(getconf CLK_TCK)
serve_config() { # DB-FILE: `grafton serve` on it with $WORK/config.yaml; sets gpid and url
  local port
  port=$(free_port)
  "$GRAFTON" serve --database-url "$1" --config "$WORK/config.yaml" --host 127.0.0.1 --port "$port" \
    >"$WORK/grafton.log" 2>&1 & gpid=$!; pids+=("$gpid")
  url="http://127.0.0.1:$port/v1/graphql"
  wait_up "$url" "$gpid" grafton
}
start_remote() { # [DELAY_MS]: tests/conformance/remote_server.mjs; sets rpid, remote_port and remote_url
  [[ -d $ROOT/tests/conformance/node_modules/graphql-http ]] || (cd "$ROOT/tests/conformance" && npm ci --no-audit --no-fund >/dev/null)
  (cd "$ROOT/tests/conformance" && DELAY_MS=${1:-0} exec node remote_server.mjs) >"$WORK/remote.log" & rpid=$!; pids+=("$rpid")
  for _ in $(seq 100); do grep -q listening "$WORK/remote.log" 2>/dev/null && break; sleep 0.1; done
  remote_port=$(awk '/listening/ {print $2}' "$WORK/remote.log")
  remote_url="http://127.0.0.1:$remote_port/graphql"
}
