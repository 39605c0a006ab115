#!/usr/bin/env bash
# Webhook auth (its answer cached) vs JWT: what authenticating costs a cheap request.
#   bench/quick/auth_hook.sh
#   GRAFTON=… LOADGEN=… ROUNDS=5 DURATION=10 CONNECTIONS=50 bench/quick/auth_hook.sh
# Creates a SQLite demo file (ROWS, default 10000) in a temp dir, gives role `user` a
# select on venues (id, name; id > X-Hasura-User-Id), starts the auth hook
# (auth_hook_server.py: role user, user id 5, Cache-Control max-age=600, counting
# its calls) and two Grafton servers on the file: one with --jwt-secret (HS256), one
# with --auth-hook. Checks both answer the same rows as the role, then per round
# loads each in turn (the order alternating) with bench/loadgen, closed loop,
# CONNECTIONS connections for DURATION s after a WARMUP s warm-up, on QUERY (default
# `{ venues(limit: 1) { id } }`: cheap, so authentication is a visible share).
# Per run: rps, p50, p95 (loadgen) and Grafton's CPU per request (utime+stime of its
# /proc/PID/stat over the run / loadgen's requests). Prints each round, the medians
# and the hook/JWT ratios; exits 1 if a run had failed requests. Target: hook ≤ 1.1×
# JWT. Everything is stopped and the temp dir removed on exit (unless WORK is given).
set -euo pipefail
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONNECTIONS=${CONNECTIONS:-50}
ROWS=${ROWS:-10000}
QUERY=${QUERY:-'{ venues(limit: 1) { id } }'}
source "$(dirname "$0")/lib.sh"

# --- the demo file
db="$WORK/demo.db"
demo_db "$db" "$ROWS"

# --- config, secrets, token
cat >"$WORK/config.yaml" <<'EOF'
tables:
  venues:
    permissions:
      user:
        select:
          columns: [id, name]
          filter: {id: {_gt: X-Hasura-User-Id}}
EOF
secret=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
key=$(python3 -c 'import secrets; print(secrets.token_urlsafe(36))')  # 48 characters
jwt=$(KEY=$key python3 - <<'EOF'
import base64, hashlib, hmac, json, os, time
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
claims = {"https://hasura.io/jwt/claims": {"x-hasura-allowed-roles": ["user"], "x-hasura-default-role": "user",
                                          "x-hasura-user-id": "5"}, "exp": int(time.time()) + 3600}
body = b64(json.dumps(claims).encode())
sig = hmac.new(os.environ["KEY"].encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
print(f"{head}.{body}.{b64(sig)}")
EOF
)

# --- the hook and the two servers
python3 "$HERE/auth_hook_server.py" "$WORK/hook.port" >"$WORK/hook.log" 2>&1 & hook_pid=$!; pids+=("$hook_pid")
for _ in $(seq 100); do [[ -s $WORK/hook.port ]] && break; sleep 0.05; done
hook_port=$(cat "$WORK/hook.port")
hook_calls() { curl -s "http://127.0.0.1:$hook_port/calls"; }
common=(serve --database-url "$db" --config "$WORK/config.yaml" --admin-secret "$secret" --host 127.0.0.1)
jwt_port=$(free_port)
"$GRAFTON" "${common[@]}" --port "$jwt_port" --jwt-secret "{\"type\":\"HS256\",\"key\":\"$key\"}" \
  >"$WORK/jwt.log" 2>&1 & jwt_pid=$!; pids+=("$jwt_pid")
hook_srv_port=$(free_port)
"$GRAFTON" "${common[@]}" --port "$hook_srv_port" --auth-hook "http://127.0.0.1:$hook_port/hook" \
  >"$WORK/hook-server.log" 2>&1 & hook_srv_pid=$!; pids+=("$hook_srv_pid")
declare -A url pid auth
url[jwt]="http://127.0.0.1:$jwt_port/v1/graphql"; pid[jwt]=$jwt_pid; auth[jwt]="Authorization: Bearer $jwt"
url[hook]="http://127.0.0.1:$hook_srv_port/v1/graphql"; pid[hook]=$hook_srv_pid
auth[hook]="Authorization: Bearer opaque-user-token"
for s in jwt hook; do wait_up "${url[$s]}" "${pid[$s]}" "$s" -H "x-hasura-admin-secret: $secret"; done

# --- same rows as the role on both
check='{"query":"{ venues(limit: 5, order_by: {id: asc}) { id name } }"}'
a_jwt=$(gql "${url[jwt]}" "$check" -H "${auth[jwt]}")
a_hook=$(gql "${url[hook]}" "$check" -H "${auth[hook]}")
if [[ $a_jwt != "$a_hook" ]] || ! grep -q '"venues":\[{"id":6,' <<<"$a_jwt"; then
  echo "FAIL: the two servers answer differently (or not the role's rows: ids from 6)" >&2
  echo "  jwt:  $a_jwt" >&2; echo "  hook: $a_hook" >&2; exit 1
fi
echo "same rows as role user on both: $a_jwt"
denied=$(gql "${url[hook]}" "$check" -H 'Authorization: Bearer wrong')
grep -q '"errors"' <<<"$denied" || { echo "FAIL: a wrong token was not refused: $denied" >&2; exit 1; }

# --- the load
python3 -c 'import json, sys; json.dump({"query": sys.argv[1], "variables": [{}]}, open(sys.argv[2], "w"))' \
  "$QUERY" "$WORK/doc.json"
load() { # SERVER SECONDS: loadgen's JSON summary
  "$LOADGEN" --url "${url[$1]}" --doc "$WORK/doc.json" --mode closed --connections "$CONNECTIONS" \
    --duration "$2" --header "${auth[$1]}"
}
calls_before=$(hook_calls)
results="$WORK/runs.tsv"
: >"$results"
echo "query: $QUERY; $CONNECTIONS connections, closed loop, ${DURATION} s per run after a ${WARMUP} s warm-up; $ROUNDS rounds"
printf '%-6s %-5s %10s %9s %9s %13s %7s\n' round auth rps p50_ms p95_ms cpu_us_per_req failed
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then order=(jwt hook); else order=(hook jwt); fi
  for s in "${order[@]}"; do
    load "$s" "$WARMUP" >"$WORK/warmup-$r-$s.json"
    t0=$(cpu_ticks "${pid[$s]}")
    load "$s" "$DURATION" >"$WORK/run-$r-$s.json"
    t1=$(cpu_ticks "${pid[$s]}")
    python3 "$HERE/loadgen_row.py" "$WORK/run-$r-$s.json" "$WORK/warmup-$r-$s.json" "$r" "$s" "$t0" "$t1" "$TCK" >>"$results"
    tail -1 "$results" | awk -F'\t' '{printf "%-6s %-5s %10.0f %9.2f %9.2f %13.1f %7d\n", $1, $2, $3, $4, $5, $6, $7}'
  done
done
calls_after=$(hook_calls)
echo "auth hook calls: $calls_before before the load (the checks), $((calls_after - calls_before)) during it" \
     "($(awk -F'\t' '{n++} END {print n}' "$results") runs and their warm-ups)"

status=0
python3 - "$results" <<'EOF' || status=$?
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
keys = ["rps", "p50", "p95", "cpu"]
by = {s: {k: [float(r[i + 2]) for r in rows if r[1] == s] for i, k in enumerate(keys)} for s in ("jwt", "hook")}
med = {s: {k: st.median(v) for k, v in d.items()} for s, d in by.items()}
names = {"cpu": "CPU µs/request", "p50": "p50 ms", "p95": "p95 ms", "rps": "rps"}
print("\nmedians            JWT        hook    hook/JWT   (median of the rounds' own ratios)")
for k in ["cpu", "p50", "p95", "rps"]:
    paired = st.median(h / j for h, j in zip(by["hook"][k], by["jwt"][k]) if j)
    print(f"{names[k]:<15} {med['jwt'][k]:>9.2f} {med['hook'][k]:>11.2f} {med['hook'][k] / med['jwt'][k]:>10.3f}"
          f"   ({paired:.3f})")
for k in ["cpu", "p50"]:
    ratio = med["hook"][k] / med["jwt"][k]
    print(f"target hook ≤ 1.1× JWT on {names[k]}: {'met' if ratio <= 1.1 else 'NOT met'} ({ratio:.3f})")
failed = sum(int(r[6]) for r in rows)
if failed:
    print(f"FAIL: {failed} failed requests (see the runs above)")
    sys.exit(1)
EOF
kill "$hook_pid"; wait "$hook_pid" 2>/dev/null || true
cat "$WORK/hook.log"  # the hook's own count, all calls: `auth hook: N calls`
exit "$status"
