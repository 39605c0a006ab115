-- wrk script: POST a GraphQL query with randomised variables per request.
-- Env: WRK_QUERY = the query text already encoded as a JSON string (with quotes),
--      WRK_LIMIT = limit (default 50), WRK_MAX_ID = id_gt upper bound (default 100000).
local query = os.getenv("WRK_QUERY")
local limit = tonumber(os.getenv("WRK_LIMIT") or "50")
local max_id = tonumber(os.getenv("WRK_MAX_ID") or "100000")
local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() * 1000 + id)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  gql_errors = 0
  responses = 0
end

function request()
  local body = '{"query":' .. query .. ',"variables":{"limit":' .. limit ..
    ',"offset":' .. math.random(0, 49) .. ',"id_gt":' .. math.random(0, max_id - 1) .. '}}'
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  responses = responses + 1
  if status ~= 200 or string.find(body, '"errors"', 1, true) then
    gql_errors = gql_errors + 1
  end
end

function done(summary, latency, requests)
  local errs = 0
  for _, t in ipairs(threads) do errs = errs + (t:get("gql_errors") or 0) end
  local secs = summary.duration / 1e6
  io.write(string.format("RESULT rps=%.1f p50_ms=%.2f p99_ms=%.2f requests=%d errors=%d socket_errors=%d\n",
    summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, errs,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
