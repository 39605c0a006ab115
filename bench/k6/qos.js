// The qos scenario's load (bench/lib/qos.py; bench/README.md, "The qos scenario"):
// Grafton only (`--naming phrag`), every answer classified by its error code.
//
//   k6 run -e URL=http://127.0.0.1:8080/v1/graphql -e MODE=attack -e HEAVY_VUS=12 -e CHEAP_VUS=10 \
//          -e DURATION=30s bench/k6/qos.js
//   k6 run -e URL=… -e MODE=closed -e DOC=roots_4 -e VUS=200 -e DURATION=8s [-e DRAIN_CHUNK=1000] bench/k6/qos.js
//   k6 run -e URL=… -e MODE=rate -e DOC=by_pk -e RATE=1000 -e DURATION=10s bench/k6/qos.js
//
// MODE=attack: HEAVY_VUS loop the unbounded nested query `heavy` while CHEAP_VUS
//   loop `by_pk` (two constant-vus scenarios, groups "heavy" and "cheap").
// MODE=closed: VUS loop DOC (group "main"). With DRAIN_CHUNK, setup() first spends
//   the caller's rate-limit allowance (see drain()), so the run sees the steady
//   rate and not a minute's allowance spent at once.
// MODE=rate: RATE requests/s of DOC (constant-arrival-rate, group "main").
//
// Env: URL (required), DOC (closed, rate: a name below, else a query of queries.js in
// Grafton's dialect, with LIMIT, default 50), MAX_ID (primary keys drawn in
// [1, MAX_ID], default 100000), HEADERS (optional: one JSON object of headers sent
// with every request), EXPECT (an outcome not to log as unexpected), SUMMARY (the
// JSON summary's path; unset: stdout). DOC=not_found is a GET of /bench-not-found
// next to the endpoint (a 404: the cost of any request).
//
// Outcomes, per group (Counters `<group>_<outcome>`): `ok` (status 200, a body
// starting with {"data": and no "errors" in it; only answers with "errors" or
// another status are parsed), the error code of the first error with `-` written `_` (timeout,
// overloaded, response_too_large, rate_limited, depth_limit_exceeded; any other
// code is other_error), http_error (a status other than 200 without a GraphQL
// error), transport (no answer). A body over 256 kB (the heavy query's data) is
// not parsed: it is `ok` when it starts with {"data":{ and its last 4 kB hold no
// "errors". The first unexpected answer (other_error, http_error, transport) of
// each VU and group is logged as `QOS-UNEXPECTED <group>: …`.
import http from 'k6/http';
import { Counter, Trend } from 'k6/metrics';
import { positiveInt, required, durationSeconds, TREND_STATS } from './lib.js';
import { lookup } from './queries.js';

export const OUTCOMES = ['ok', 'timeout', 'overloaded', 'response_too_large', 'rate_limited', 'depth_limit_exceeded',
  'other_error', 'http_error', 'transport'];
const GROUPS = ['main', 'heavy', 'cheap'];
const BIG = 256 * 1024;

const MAX_ID = positiveInt('MAX_ID', 100000);

function randId() {
  return 1 + Math.floor(Math.random() * MAX_ID);
}

function rootsDoc(n) {
  const decls = [];
  const fields = [];
  for (let k = 1; k <= n; k++) {
    decls.push('$g' + k + ': Int!');
    fields.push('r' + k + ': venues(limit: 10, where: {id: {gt: $g' + k + '}}) { id name }');
  }
  return 'query roots' + n + '(' + decls.join(', ') + ') { ' + fields.join(' ') + ' }';
}

function rootsVars(n) {
  return function () {
    const v = {};
    for (let k = 1; k <= n; k++) v['g' + k] = Math.floor(Math.random() * MAX_ID);
    return v;
  };
}

// The documents (phrag naming); qos.py holds the same text for the report.
export const DOCS = {
  heavy: { query: '{ meetups { id title start_at meetups_members { member { id email first_name last_name } } } }',
    variables: () => ({}) },
  by_pk: { query: 'query cheap($id: Int!) { venues_by_pk(id: $id) { id name postal_code } }',
    variables: () => ({ id: randId() }) },
  deep: { query: 'query deep($id: Int!) { venues_by_pk(id: $id) { id meetups(limit: 1) { id venue { id } } } }',
    variables: () => ({ id: randId() }) },
  not_found: { path: '/bench-not-found' },
  roots_1: { query: rootsDoc(1), variables: rootsVars(1) },
  roots_4: { query: rootsDoc(4), variables: rootsVars(4) },
  roots_9: { query: rootsDoc(9), variables: rootsVars(9) },
};

/** A document of DOCS, else queries.js' Grafton dialect (e.g. the seed queries) with LIMIT. */
function doc(name) {
  if (!DOCS[name]) {
    const e = lookup('grafton', name);
    const limit = positiveInt('LIMIT', 50);
    DOCS[name] = { query: e.query, variables: () => e.variables(limit, Math.random) };
  }
  return DOCS[name];
}

function headers() {
  const h = { 'Content-Type': 'application/json' };
  const raw = __ENV.HEADERS;
  if (raw) {
    let extra;
    try { extra = JSON.parse(raw); } catch (e) { throw new Error('env HEADERS must be JSON: ' + e); }
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) throw new Error('env HEADERS must be a JSON object');
    for (const k in extra) h[k] = extra[k];
  }
  return h;
}

const URL = required('URL');
const MODE = required('MODE');
const DURATION = __ENV.DURATION || '10s';
if (durationSeconds(DURATION) === null) throw new Error('env DURATION must be a k6 duration like 10s, got "' + DURATION + '"');
const HEADERS = headers();
const BASE = URL.replace(/\/v1\/graphql$/, '');
const EXPECT = __ENV.EXPECT || '';

// Metrics, declared in the init context for every group.
const counters = {};
const durations = {};
const okDurations = {};
const bytes = {};
for (const g of GROUPS) {
  counters[g] = {};
  for (const o of OUTCOMES) counters[g][o] = new Counter(g + '_' + o);
  durations[g] = new Trend(g + '_duration', true);
  okDurations[g] = new Trend(g + '_ok_duration', true);
  bytes[g] = new Trend(g + '_bytes');
}

let options;
let MAIN = null;
let VUS = null;
let RATE = null;
if (MODE === 'attack') {
  const heavyVus = positiveInt('HEAVY_VUS', 12);
  const cheapVus = positiveInt('CHEAP_VUS', 10);
  VUS = { heavy: heavyVus, cheap: cheapVus };
  options = {
    scenarios: {
      heavy: { executor: 'constant-vus', vus: heavyVus, duration: DURATION, exec: 'heavy', gracefulStop: '30s' },
      cheap: { executor: 'constant-vus', vus: cheapVus, duration: DURATION, exec: 'cheap', gracefulStop: '10s' },
    },
  };
} else if (MODE === 'closed') {
  MAIN = required('DOC');
  doc(MAIN);
  VUS = positiveInt('VUS', 10);
  options = { scenarios: { main: { executor: 'constant-vus', vus: VUS, duration: DURATION, gracefulStop: '10s' } } };
} else if (MODE === 'rate') {
  MAIN = required('DOC');
  doc(MAIN);
  RATE = positiveInt('RATE', 100);
  const pre = positiveInt('PRE_VUS', 50);
  options = {
    scenarios: {
      main: { executor: 'constant-arrival-rate', rate: RATE, timeUnit: '1s', duration: DURATION,
        preAllocatedVUs: pre, maxVUs: pre * 4, gracefulStop: '10s' },
    },
  };
} else {
  throw new Error('env MODE must be attack, closed or rate, got "' + MODE + '"');
}
options.discardResponseBodies = false;
options.summaryTrendStats = TREND_STATS;
options.setupTimeout = '120s';
export { options };

const PARAMS = {};
function params(group) {
  if (!PARAMS[group]) PARAMS[group] = { headers: HEADERS, tags: { name: 'qos:' + group }, responseType: 'text', timeout: '120s' };
  return PARAMS[group];
}

/** The outcome of one answer (see the header). */
export function outcome(res) {
  if (!res || res.status === 0) return 'transport';
  const body = typeof res.body === 'string' ? res.body : '';
  // The common case as cheaply as closed.js checks it: no "errors" anywhere.
  if (res.status === 200 && body.length <= BIG && body.indexOf('"errors"') < 0) {
    return body.slice(0, 8) === '{"data":' ? 'ok' : 'other_error';
  }
  if (body.length > BIG) {
    const head = body.slice(0, 10);
    const tail = body.slice(body.length - 4096);
    return res.status === 200 && head === '{"data":{"' && tail.indexOf('"errors"') < 0 ? 'ok' : 'other_error';
  }
  let json = null;
  try { json = JSON.parse(body); } catch (e) { json = null; }
  if (json && Array.isArray(json.errors) && json.errors.length) {
    const e = json.errors[0];
    const code = e && e.extensions && typeof e.extensions.code === 'string' ? e.extensions.code.replace(/-/g, '_') : '';
    return OUTCOMES.indexOf(code) > 0 && code !== 'other_error' && code !== 'http_error' && code !== 'transport'
      ? code : 'other_error';
  }
  if (res.status !== 200) return 'http_error';
  return json && json.data ? 'ok' : 'other_error';
}

const logged = {};

function send(group, name) {
  const d = doc(name);
  const res = d.path ? http.get(BASE + d.path, params(group))
    : http.post(URL, JSON.stringify({ query: d.query, variables: d.variables() }), params(group));
  const o = outcome(res);
  counters[group][o].add(1);
  const t = res.timings ? res.timings.duration : 0;
  durations[group].add(t);
  if (o === 'ok') okDurations[group].add(t);
  if (group === 'heavy') bytes[group].add(typeof res.body === 'string' ? res.body.length : 0);
  if ((o === 'other_error' || o === 'http_error' || o === 'transport') && o !== EXPECT && !logged[group]) {
    logged[group] = true;
    const body = typeof res.body === 'string' ? res.body.slice(0, 400) : String(res.body);
    console.warn('QOS-UNEXPECTED ' + group + ': status ' + res.status + (res.error ? ' (' + res.error + ')' : '') + '; answer: ' + body);
  }
}

const TYPENAMES = {};
function typenames(n) {
  if (!TYPENAMES[n]) {
    const f = [];
    for (let k = 0; k < n; k++) f.push('t' + k + ': __typename');
    TYPENAMES[n] = JSON.stringify({ query: '{ ' + f.join(' ') + ' }' });
  }
  return TYPENAMES[n];
}

/**
 * Spends the caller's rate-limit allowance (counted per root field): documents of
 * DRAIN_CHUNK aliased `__typename` root fields (no SQL) until one is refused, then
 * half as many, down to 1. What is left is less than one root field.
 */
function drain(chunk) {
  const t0 = Date.now();
  let n = chunk;
  let spent = 0;
  let requests = 0;
  while (n >= 1) {
    if (requests >= 100000) throw new Error('drain: the allowance did not run out after ' + requests + ' requests');
    const res = http.post(URL, typenames(n), { headers: HEADERS, tags: { name: 'qos:drain' }, responseType: 'text' });
    requests++;
    const o = outcome(res);
    if (o === 'ok') spent += n;
    else if (o === 'rate_limited') n = Math.floor(n / 2);
    else throw new Error('drain: unexpected answer (' + o + ', status ' + res.status + '): ' + String(res.body).slice(0, 300));
  }
  return { spent: spent, requests: requests, ms: Date.now() - t0 };
}

export function setup() {
  const t0 = Date.now();
  const chunk = __ENV.DRAIN_CHUNK ? positiveInt('DRAIN_CHUNK', 1000) : 0;
  const out = { drain: chunk ? drain(chunk) : null };
  out.setup_ms = Date.now() - t0;
  return out;
}

export default function () {
  send('main', MAIN);
}

export function heavy() {
  send('heavy', 'heavy');
}

export function cheap() {
  send('cheap', 'by_pk');
}

function round(x, digits) {
  if (typeof x !== 'number' || !isFinite(x)) return null;
  const f = Math.pow(10, digits);
  return Math.round(x * f) / f;
}

function groupSummary(m, g, seconds) {
  const outcomes = {};
  let total = 0;
  for (const o of OUTCOMES) {
    const c = m[g + '_' + o];
    const n = c ? c.values.count : 0;
    if (n) outcomes[o] = n;
    total += n;
  }
  if (!total) return null;
  const d = (m[g + '_duration'] && m[g + '_duration'].values) || {};
  const ok = (m[g + '_ok_duration'] && m[g + '_ok_duration'].values) || {};
  const b = (m[g + '_bytes'] && m[g + '_bytes'].values) || {};
  return {
    requests: total,
    rps: round(total / seconds, 2),
    ok_rps: round((outcomes.ok || 0) / seconds, 2),
    outcomes: outcomes,
    p50: round(d.med, 3), p75: round(d['p(75)'], 3), p90: round(d['p(90)'], 3), p95: round(d['p(95)'], 3),
    p99: round(d['p(99)'], 3), min: round(d.min, 3), max: round(d.max, 3), avg: round(d.avg, 3),
    ok_p50: round(ok.med, 3), ok_p95: round(ok['p(95)'], 3), ok_p99: round(ok['p(99)'], 3), ok_max: round(ok.max, 3),
    bytes_max: round(b.max, 0), bytes_avg: round(b.avg, 0),
  };
}

export function handleSummary(data) {
  const m = data.metrics;
  const setupData = data.setup_data || {};
  // The measured window: the run without setup() (the drain), graceful stop included.
  const seconds = Math.max(0.001, (data.state.testRunDurationMs - (setupData.setup_ms || 0)) / 1000);
  const groups = {};
  for (const g of GROUPS) {
    const s = groupSummary(m, g, seconds);
    if (s) groups[g] = s;
  }
  const out = {
    mode: MODE, doc: MAIN, url: URL, vus: VUS, rate: RATE, duration: DURATION,
    duration_s: round(seconds, 3),
    drain: setupData.drain || null,
    dropped_iterations: m.dropped_iterations ? m.dropped_iterations.values.count : 0,
    groups: groups,
  };
  const json = JSON.stringify(out, null, 2) + '\n';
  const path = __ENV.SUMMARY;
  if (!path) return { stdout: json };
  const parts = Object.keys(groups).map((g) => g + ': ' + groups[g].requests + ' requests, ' + groups[g].rps + ' req/s, p95 ' +
    groups[g].p95 + ' ms, ' + JSON.stringify(groups[g].outcomes));
  const r = { stdout: 'qos ' + MODE + (MAIN ? ' ' + MAIN : '') + ': ' + parts.join('; ') + ' -> ' + path + '\n' };
  r[path] = json;
  return r;
}
