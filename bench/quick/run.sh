#!/usr/bin/env bash
# Quick side-by-side throughput check: Grafton vs PostGraphile v4 on one
# throwaway PostgreSQL cluster loaded with the meetup demo dataset.
#
# Usage: bench/quick/run.sh            (from anywhere; needs node/npm, psql, initdb/pg_ctl)
# Knobs (env): ROWS=100000 DURATION=15 (s per wrk run) ROUNDS=3 THREADS=2 CONNS=50
#              LIMIT=50 POOL=20 WARMUP=5 (s per system/query, 0 = none)
#              GRAFTON=path/to/grafton (default: $CARGO_TARGET_DIR or target/, built if missing)
#              KEEP_RESULTS=dir (copy raw wrk output + logs there)
# For every seed query it runs wrk against each system alternately (the order
# flips every round) and prints medians of requests/s, p50 and p99 per system
# and the Grafton/PostGraphile ratio.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TOOLS="$ROOT/bench/.tools"
ROWS=${ROWS:-100000}
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
CONNS=${CONNS:-50}
LIMIT=${LIMIT:-50}
POOL=${POOL:-20}
WARMUP=${WARMUP:-5}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
GRAFTON=${GRAFTON:-$TARGET_DIR/release/grafton}
PG_VERSION_PIN=postgraphile@4.14.1
FILTER_PIN=postgraphile-plugin-connection-filter@2.3.0

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# ---------------------------------------------------------------- tools
need() { command -v "$1" >/dev/null 2>&1 || { echo "missing required tool: $1" >&2; exit 1; }; }
need node; need npm; need curl; need jq; need psql
if ! command -v wrk >/dev/null 2>&1; then
  log "installing wrk (apt-get)"
  apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
fi
POSTGRAPHILE="$TOOLS/node/node_modules/.bin/postgraphile"
if [[ ! -x "$POSTGRAPHILE" || ! -d "$TOOLS/node/node_modules/postgraphile-plugin-connection-filter" ]]; then
  log "installing $PG_VERSION_PIN and $FILTER_PIN into $TOOLS/node"
  mkdir -p "$TOOLS/node"
  npm install --prefix "$TOOLS/node" "$PG_VERSION_PIN" "$FILTER_PIN" >/dev/null 2>&1
fi
if [[ ! -x "$GRAFTON" ]]; then
  log "building grafton (release) into $TARGET_DIR"
  (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release -p grafton)
fi
PGBIN=$(pg_config --bindir 2>/dev/null || dirname "$(command -v initdb)")

# ---------------------------------------------------------------- cleanup
TMP=$(mktemp -d /tmp/grafton-quick.XXXXXX)
PIDS=()
PGDATA="$TMP/pgdata"
AS_PG=()
if [[ $(id -u) -eq 0 ]]; then AS_PG=(runuser -u postgres --); chown postgres "$TMP"; fi
cleanup() {
  local rc=$?
  set +e
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  if [[ -f "$PGDATA/postmaster.pid" ]]; then
    "${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null 2>&1
  fi
  if [[ -n "${KEEP_RESULTS:-}" ]]; then mkdir -p "$KEEP_RESULTS"; cp "$TMP"/*.log "$TMP"/*.txt "$KEEP_RESULTS"/ 2>/dev/null; fi
  rm -rf "$TMP"
  exit $rc
}
trap cleanup EXIT INT TERM

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# ---------------------------------------------------------------- postgres
PGPORT=$(free_port)
log "initdb + start PostgreSQL on port $PGPORT ($TMP)"
"${AS_PG[@]}" "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --no-instructions >"$TMP/initdb.log" 2>&1
"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$PGDATA" -l "$TMP/postgres.log" -w start \
  -o "-p $PGPORT -k $TMP -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" >/dev/null
URL="postgres://postgres@127.0.0.1:$PGPORT/meetup"
psql -q -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:$PGPORT/postgres" -c "CREATE DATABASE meetup"
log "loading $ROWS rows per table"
t0=$(date +%s)
"$GRAFTON" demo --rows "$ROWS" --postgres-sql | psql -q -v ON_ERROR_STOP=1 "$URL" >/dev/null
psql -q -v ON_ERROR_STOP=1 "$URL" -c "VACUUM ANALYZE"
log "loaded in $(( $(date +%s) - t0 ))s: $(psql -At "$URL" -c 'select count(*) from venues') venues, $(psql -At "$URL" -c 'select count(*) from meetups_members') meetups_members"

# ---------------------------------------------------------------- servers
GPORT=$(free_port)
"$GRAFTON" serve --database-url "$URL" --naming phrag --host 127.0.0.1 --port "$GPORT" --pool-size "$POOL" >"$TMP/grafton.log" 2>&1 &
GPID=$!; PIDS+=("$GPID")
PPORT=$(free_port)
(cd "$TOOLS/node" && NODE_ENV=production exec "$POSTGRAPHILE" -c "$URL" --schema public --host 127.0.0.1 --port "$PPORT" \
  --disable-query-log --append-plugins postgraphile-plugin-connection-filter --dynamic-json \
  --no-setof-functions-contain-nulls --disable-default-mutations --max-pool-size "$POOL") >"$TMP/postgraphile.log" 2>&1 &
PPID_=$!; PIDS+=("$PPID_")
G_URL="http://127.0.0.1:$GPORT/v1/graphql"
P_URL="http://127.0.0.1:$PPORT/graphql"
wait_up() { # url pid name
  for _ in $(seq 1 300); do
    if curl -sf -H 'content-type: application/json' -d '{"query":"{__typename}"}' "$1" 2>/dev/null | grep -q '"data"'; then return 0; fi
    kill -0 "$2" 2>/dev/null || { echo "$3 exited; log:" >&2; cat "$TMP/$3.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$3 did not come up in 30 s; log:" >&2; cat "$TMP/$3.log" >&2; exit 1
}
wait_up "$G_URL" "$GPID" grafton
wait_up "$P_URL" "$PPID_" postgraphile
# PostGraphile runs as a node child of the wrapper subshell: find its pid for RSS.
PG_NODE_PID=$(pgrep -P "$PPID_" node || echo "$PPID_")
rss() { awk '/^VmRSS/{printf "%.1f", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }
hwm() { awk '/^VmHWM/{printf "%.1f", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }
log "grafton :$GPORT (pid $GPID, idle RSS $(rss "$GPID") MB), postgraphile :$PPORT (pid $PG_NODE_PID, idle RSS $(rss "$PG_NODE_PID") MB)"

# ---------------------------------------------------------------- queries
NAMES=(venues venue_meetups meetups_members)
G_Q=(
  'query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code } }'
  'query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code meetups(limit: $limit, sort: { id: desc }) { id title } } }'
  'query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { meetups(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id title meetups_members(limit: $limit) { member { id email } } } }'
)
P_Q=(
  'query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { allVenues(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id name postalCode } } }'
  'query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { allVenues(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id name postalCode meetupsByVenueId(first: $limit, orderBy: ID_DESC) { nodes { id title } } } } }'
  'query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { allMeetups(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id title meetupsMembersByMeetupId(first: $limit, orderBy: PRIMARY_KEY_ASC) { nodes { memberByMemberId { id email } } } } } }'
)
# jq programs that normalise each answer to the same shape.
G_NORM=(
  '.data.venues | map([.id, .name, .postal_code])'
  '.data.venues | map([.id, .name, .postal_code, (.meetups | map([.id, .title]))])'
  '.data.meetups | map([.id, .title, (.meetups_members | map([.member.id, .member.email]))])'
)
P_NORM=(
  '.data.allVenues.nodes | map([.id, .name, .postalCode])'
  '.data.allVenues.nodes | map([.id, .name, .postalCode, (.meetupsByVenueId.nodes | map([.id, .title]))])'
  '.data.allMeetups.nodes | map([.id, .title, (.meetupsMembersByMeetupId.nodes | map([.memberByMemberId.id, .memberByMemberId.email]))])'
)

# ---------------------------------------------------------------- same rows?
CHECK_VARS="{\"limit\":$LIMIT,\"offset\":7,\"id_gt\":$(( ROWS / 2 + 345 ))}"
MISMATCH=0
for i in "${!NAMES[@]}"; do
  for sys in G P; do
    if [[ $sys == G ]]; then q=${G_Q[$i]}; url=$G_URL; norm=${G_NORM[$i]}; else q=${P_Q[$i]}; url=$P_URL; norm=${P_NORM[$i]}; fi
    body=$(jq -cn --arg q "$q" --argjson v "$CHECK_VARS" '{query: $q, variables: $v}')
    curl -s -H 'content-type: application/json' -d "$body" "$url" >"$TMP/check-$sys-$i.json"
    if ! jq -e "$norm" "$TMP/check-$sys-$i.json" >"$TMP/norm-$sys-$i.json" 2>/dev/null; then
      echo "!! ${NAMES[$i]}: unexpected answer from $sys for $body:" >&2; head -c 2000 "$TMP/check-$sys-$i.json" >&2; echo >&2
      MISMATCH=1
    fi
  done
  if diff -q "$TMP/norm-G-$i.json" "$TMP/norm-P-$i.json" >/dev/null; then
    log "check ${NAMES[$i]}: same rows ($(jq length "$TMP/norm-G-$i.json") parents, $(wc -c <"$TMP/check-G-$i.json") B grafton / $(wc -c <"$TMP/check-P-$i.json") B postgraphile)"
  else
    MISMATCH=1
    echo "!! ${NAMES[$i]}: answers differ for variables $CHECK_VARS (< grafton, > postgraphile):" >&2
    diff <(jq -c '.[]' "$TMP/norm-G-$i.json") <(jq -c '.[]' "$TMP/norm-P-$i.json") | head -20 >&2 || true
  fi
done

# ---------------------------------------------------------------- load
RESULTS="$TMP/results.txt"; : >"$RESULTS"
run_wrk() { # sys idx duration round
  local sys=$1 i=$2 dur=$3 round=$4 q url pid out
  if [[ $sys == grafton ]]; then q=${G_Q[$i]}; url=$G_URL; pid=$GPID; else q=${P_Q[$i]}; url=$P_URL; pid=$PG_NODE_PID; fi
  out="$TMP/wrk-$sys-$i-$round.log"
  # sample the server's RSS half-way through the run
  ( sleep $(( dur / 2 )); rss "$pid" >"$TMP/rss-$sys-$i-$round" ) &
  local sampler=$!
  WRK_QUERY=$(printf '%s' "$q" | jq -Rs .) WRK_LIMIT=$LIMIT WRK_MAX_ID=$ROWS \
    wrk -t"$THREADS" -c"$CONNS" -d"${dur}s" --latency -s "$HERE/post.lua" "$url" >"$out" 2>&1
  wait "$sampler" 2>/dev/null || true
  local line; line=$(grep '^RESULT' "$out" || echo "RESULT rps=0 p50_ms=0 p99_ms=0 requests=0 errors=-1 socket_errors=-1")
  [[ $round == warm ]] || echo "$sys ${NAMES[$i]} $round ${line#RESULT } rss_mb=$(cat "$TMP/rss-$sys-$i-$round")" >>"$RESULTS"
  log "$round ${NAMES[$i]} $sys: ${line#RESULT } rss_mb=$(cat "$TMP/rss-$sys-$i-$round")"
}
if (( WARMUP > 0 )); then
  for i in "${!NAMES[@]}"; do run_wrk grafton "$i" "$WARMUP" warm; run_wrk postgraphile "$i" "$WARMUP" warm; done
fi
for r in $(seq 1 "$ROUNDS"); do
  for i in "${!NAMES[@]}"; do
    if (( r % 2 )); then order=(grafton postgraphile); else order=(postgraphile grafton); fi
    for sys in "${order[@]}"; do run_wrk "$sys" "$i" "$DURATION" "$r"; done
  done
done

# ---------------------------------------------------------------- report
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END{if(NR==0){print "?"} else if(NR%2){print a[(NR+1)/2]} else {printf "%.2f\n",(a[NR/2]+a[NR/2+1])/2}}'; }
echo
echo "== Grafton vs PostGraphile $PG_VERSION_PIN: rows=$ROWS limit=$LIMIT wrk -t$THREADS -c$CONNS -d${DURATION}s x $ROUNDS rounds, pool $POOL"
echo "== load: $(uptime)"
printf '%-16s %-13s %9s %8s %8s %7s %7s\n' query system rps p50_ms p99_ms errors rss_mb
for i in "${!NAMES[@]}"; do
  n=${NAMES[$i]}
  for sys in grafton postgraphile; do
    rows=$(grep "^$sys $n " "$RESULTS" || true)
    med=$(field rps <<<"$rows" | median)
    if [[ $sys == grafton ]]; then g_rps=$med; else p_rps=$med; fi
    printf '%-16s %-13s %9s %8s %8s %7s %7s\n' "$n" "$sys" \
      "$(field rps <<<"$rows" | median)" "$(field p50_ms <<<"$rows" | median)" "$(field p99_ms <<<"$rows" | median)" \
      "$(field errors <<<"$rows" | awk '{s+=$1} END{print s+0}')" "$(field rss_mb <<<"$rows" | median)"
  done
  echo "$n: grafton/postgraphile rps ratio = $(awk -v a="$g_rps" -v b="$p_rps" 'BEGIN{ if (b>0) printf "%.2f", a/b; else print "?" }')x"
done
echo "grafton RSS after load: $(rss "$GPID") MB (peak VmHWM $(hwm "$GPID") MB); postgraphile RSS after load: $(rss "$PG_NODE_PID") MB (peak $(hwm "$PG_NODE_PID") MB)"
(( MISMATCH == 0 )) || echo "!! some answers differed between the systems (see above)"
