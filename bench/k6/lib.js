// Shared by closed.js, capacity.js and writes.js: reading the environment, sending one
// GraphQL request, and the JSON summary the orchestrator reads.
import http from 'k6/http';
import { check } from 'k6';
import { Rate } from 'k6/metrics';
import { lookup } from './queries.js';

/** true for every request that failed: transport error, status != 200, or "errors" in the body. */
export const graphqlErrors = new Rate('graphql_errors');

export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(75)', 'p(90)', 'p(95)', 'p(99)'];

function required(name) {
  const v = __ENV[name];
  if (v === undefined || v === '') throw new Error('missing required env ' + name);
  return v;
}

function positiveInt(name, fallback) {
  const raw = __ENV[name] === undefined || __ENV[name] === '' ? String(fallback) : __ENV[name];
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error('env ' + name + ' must be a positive integer, got "' + raw + '"');
  return n;
}

/**
 * HEADERS: an optional JSON array of header objects, e.g. one per user
 * (`[{"Authorization": "Bearer …"}, …]`); VU v sends set (v - 1) % length.
 */
function headerSets() {
  const raw = __ENV.HEADERS;
  if (raw === undefined || raw === '') return [];
  let sets;
  try { sets = JSON.parse(raw); } catch (e) { throw new Error('env HEADERS must be JSON: ' + e); }
  if (!Array.isArray(sets) || sets.some((h) => typeof h !== 'object' || h === null || Array.isArray(h))) {
    throw new Error('env HEADERS must be a JSON array of objects');
  }
  return sets;
}

/** URL, SYSTEM, QUERY, LIMIT (and HEADERS) from the environment, validated (init context). */
export function config() {
  const system = required('SYSTEM');
  const query = required('QUERY');
  return {
    url: required('URL'),
    system: system,
    query: query,
    limit: positiveInt('LIMIT', 50),
    entry: lookup(system, query),
    headerSets: headerSets(),
  };
}

export { positiveInt, required };

const PARAMS_CACHE = {};

/** POST one request with fresh random variables; records graphql_errors. */
export function send(cfg) {
  const sets = cfg.headerSets || [];
  const set = sets.length ? (Math.max(__VU, 1) - 1) % sets.length : -1;
  const key = cfg.system + ':' + cfg.query + ':' + set;
  let params = PARAMS_CACHE[key];
  if (!params) {
    const headers = { 'Content-Type': 'application/json' };
    if (set >= 0) for (const h in sets[set]) headers[h] = sets[set][h];
    params = {
      headers: headers,
      tags: { name: cfg.system + ':' + cfg.query },
      responseType: 'text',
    };
    PARAMS_CACHE[key] = params;
  }
  const body = JSON.stringify({ query: cfg.entry.query, variables: cfg.entry.variables(cfg.limit, Math.random) });
  const res = http.post(cfg.url, body, params);
  const okStatus = res.status === 200;
  const okBody = typeof res.body === 'string' && res.body.length > 0 && res.body.indexOf('"errors"') < 0;
  check(res, { 'status 200': () => okStatus, 'no GraphQL errors': () => okBody });
  graphqlErrors.add(!(okStatus && okBody));
  return res;
}

/** Parse a k6 duration like "10s", "1m30s", "500ms", "2h" into seconds (null if unparsable). */
export function durationSeconds(s) {
  if (s === undefined || s === null || s === '') return null;
  if (/^\d+(\.\d+)?$/.test(String(s))) return Number(s);
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = '';
  let m;
  while ((m = re.exec(String(s))) !== null) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    matched += m[0];
  }
  return matched === String(s) ? total : null;
}

function round(x, digits) {
  if (typeof x !== 'number' || !isFinite(x)) return null;
  const f = Math.pow(10, digits);
  return Math.round(x * f) / f;
}

/** The common JSON shape of both scripts (latencies in ms). */
export function summaryObject(data, cfg, extra) {
  const m = data.metrics;
  const d = (m.http_req_duration && m.http_req_duration.values) || {};
  const reqs = (m.http_reqs && m.http_reqs.values) || { count: 0, rate: 0 };
  const errs = (m.graphql_errors && m.graphql_errors.values) || null;
  const httpFailed = (m.http_req_failed && m.http_req_failed.values) || null;
  const out = {
    system: cfg.system,
    query: cfg.query,
    limit: cfg.limit,
    url: cfg.url,
    vus: null,
    duration_s: round(data.state.testRunDurationMs / 1000, 3),
    requests: reqs.count || 0,
    rps: round(reqs.rate || 0, 2),
    // Share of requests that failed in any way (transport, status != 200, GraphQL "errors").
    failed_rate: errs ? round(errs.rate, 6) : (reqs.count ? 1 : 0),
    // k6's own http_req_failed (transport errors and status >= 400 only).
    http_failed_rate: httpFailed ? round(httpFailed.rate, 6) : null,
    p50: round(d.med, 3),
    p75: round(d['p(75)'], 3),
    p90: round(d['p(90)'], 3),
    p95: round(d['p(95)'], 3),
    p99: round(d['p(99)'], 3),
    min: round(d.min, 3),
    max: round(d.max, 3),
    avg: round(d.avg, 3),
    vus_max: m.vus_max ? m.vus_max.values.max : null,
  };
  for (const k in extra) out[k] = extra[k];
  return out;
}

/** handleSummary's return value: JSON to $SUMMARY (or stdout), one readable line on stdout. */
export function summaryOutput(obj) {
  const json = JSON.stringify(obj, null, 2) + '\n';
  const path = __ENV.SUMMARY;
  if (!path) return { stdout: json };
  const line = obj.system + ' ' + obj.query + ': ' + obj.requests + ' requests, ' + obj.rps + ' req/s, p50 ' + obj.p50 +
    ' ms, p95 ' + obj.p95 + ' ms, p99 ' + obj.p99 + ' ms, failed ' + (obj.failed_rate * 100).toFixed(2) + '%' +
    (obj.passed === undefined ? '' : ', passed=' + obj.passed) + ' -> ' + path + '\n';
  const out = { stdout: line };
  out[path] = json;
  return out;
}
