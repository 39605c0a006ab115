#!/usr/bin/env bash
# Self-check of the receiver: build (if needed), start on kernel-picked ports,
# send one OTLP/HTTP JSON trace with curl, read it back from the spans file.
# Needs bash, curl, python3. Exits 0 and prints the received span on success.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$("$here/install.sh")"
work="$(mktemp -d)"
pid=""
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

OTLP_SPANS_FILE="$work/spans.jsonl" "$bin" --config "$here/collector.yaml" 2>"$work/collector.log" &
pid=$!

# Wait for readiness, then read the ports the kernel picked from the JSON log.
for _ in $(seq 100); do
  grep -q '"msg":"Everything is ready' "$work/collector.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/collector.log" >&2; exit 1; }
  sleep 0.1
done
endpoint() { grep "\"msg\":\"Starting $1 server\"" "$work/collector.log" | sed -E 's/.*"endpoint":"([^"]+)".*/\1/'; }
http="$(endpoint HTTP)"; grpc="$(endpoint GRPC)"
echo "collector pid $pid: OTLP/HTTP $http, OTLP/gRPC $grpc" >&2

curl -sSf -H 'Content-Type: application/json' "http://$http/v1/traces" --data-binary @- >/dev/null <<'EOF'
{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"smoke"}}]},
 "scopeSpans":[{"scope":{"name":"smoke"},"spans":[
  {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b173","parentSpanId":"eee19b7ec3c1b174",
   "name":"graphql.resolve","kind":1,"startTimeUnixNano":"1700000000100000000","endTimeUnixNano":"1700000000200000000",
   "attributes":[{"key":"graphql.field.path","value":{"stringValue":"user.name"}},{"key":"n","value":{"intValue":"3"}}]}]}]}]}
EOF

# The export call has returned, so the span is already on disk (unbuffered file exporter).
python3 - "$work/spans.jsonl" <<'EOF'
import json, sys
spans = [s for line in open(sys.argv[1]) if line.strip()
         for rs in json.loads(line)["resourceSpans"]
         for ss in rs["scopeSpans"] for s in ss["spans"]]
assert len(spans) == 1, spans
s = spans[0]
assert (s["traceId"], s["spanId"], s["parentSpanId"], s["name"]) == (
    "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b173", "eee19b7ec3c1b174", "graphql.resolve"), s
attrs = {a["key"]: a["value"] for a in s["attributes"]}
assert attrs == {"graphql.field.path": {"stringValue": "user.name"}, "n": {"intValue": "3"}}, attrs
print(json.dumps(s))
print("smoke: 1 passed, 0 failed")
EOF
