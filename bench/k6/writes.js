// Writes at fixed concurrency (closed loop): VUS virtual users each send the
// next mutation as soon as the previous answer arrives, for DURATION (or, with
// ITERATIONS, that many requests in all: a probe).
//
//   k6 run -e URL=http://127.0.0.1:8080/v1/graphql -e SYSTEM=grafton -e WRITE=insert_one \
//          -e VUS=10 -e DURATION=10s [-e MAX_ID=100000] [-e TAG=run1] [-e SUMMARY=out.json] bench/k6/writes.js
//
// WRITE is a name of mutations.js (insert_one, insert_batch_100, update_by_pk),
// SYSTEM its dialect (grafton or postgraphile), URL any endpoint speaking it.
// MAX_ID: update_by_pk touches existing ids in [1, MAX_ID] (default 100000).
// TAG: part of every written name (default: the start time), so runs differ.
//
// A request counts as failed (Rate graphql_errors) unless it is status 200,
// JSON, without "errors", and its data is the expected answer (an id back;
// affected_rows == 100; the updated row with the new name). Rows are counted
// (Counter rows_written) for successful requests only. The first failure of
// each VU is logged as `WRITE-FAILED …` with the answer.
//
// handleSummary writes closed.js's JSON plus "write", "rows_per_request",
// "rows" (rows written by successful requests) and "rows_per_s".
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import { graphqlErrors, positiveInt, required, summaryObject, summaryOutput, durationSeconds, TREND_STATS } from './lib.js';
import { lookupWrite } from './mutations.js';

const rowsWritten = new Counter('rows_written');

const URL = required('URL');
const SYSTEM = required('SYSTEM');
const WRITE = required('WRITE');
const entry = lookupWrite(SYSTEM, WRITE);
const VUS = positiveInt('VUS', 10);
const MAX_ID = positiveInt('MAX_ID', 100000);
const DURATION = __ENV.DURATION || '10s';
const ITERATIONS = __ENV.ITERATIONS ? positiveInt('ITERATIONS', 1) : null;
if (!ITERATIONS && durationSeconds(DURATION) === null) {
  throw new Error('env DURATION must be a k6 duration like 10s or 1m, got "' + DURATION + '"');
}

export const options = {
  scenarios: {
    writes: ITERATIONS
      ? { executor: 'shared-iterations', vus: Math.min(VUS, ITERATIONS), iterations: ITERATIONS, maxDuration: '60s' }
      : { executor: 'constant-vus', vus: VUS, duration: DURATION, gracefulStop: '10s' },
  },
  discardResponseBodies: false,
  summaryTrendStats: TREND_STATS,
  tags: { system: SYSTEM, write: WRITE },
};

const PARAMS = {
  headers: { 'Content-Type': 'application/json' },
  tags: { name: SYSTEM + ':' + WRITE },
  responseType: 'text',
};

let logged = false;

/** One tag for the whole run (init code runs once per VU, setup() once). */
export function setup() {
  return { tag: __ENV.TAG || String(Date.now()) };
}

/** null when the answer is the expected one, else why not. */
function verdict(res, vars) {
  if (res.status !== 200) return 'status ' + res.status + (res.error ? ' (' + res.error + ')' : '');
  let body;
  try {
    body = JSON.parse(res.body);
  } catch (e) {
    return 'not JSON';
  }
  if (body === null || typeof body !== 'object') return 'not a JSON object';
  if (body.errors !== undefined) return 'GraphQL errors';
  if (!body.data) return 'no data';
  try {
    return entry.verify(body.data, vars);
  } catch (e) {
    return 'unexpected shape (' + e + ')';
  }
}

export default function (run) {
  const ctx = { tag: run.tag, vu: __VU, iter: __ITER, maxId: MAX_ID, vus: VUS, rand: Math.random };
  const vars = entry.variables(ctx);
  const res = http.post(URL, JSON.stringify({ query: entry.query, variables: vars }), PARAMS);
  const why = verdict(res, vars);
  check(res, { 'expected answer': () => why === null });
  graphqlErrors.add(why !== null);
  if (why === null) {
    rowsWritten.add(entry.rows);
  } else if (!logged) {
    logged = true;
    console.error('WRITE-FAILED ' + SYSTEM + ' ' + WRITE + ': ' + why + '; answer: ' + String(res.body).slice(0, 600));
  }
}

export function handleSummary(data) {
  const rows = data.metrics.rows_written ? data.metrics.rows_written.values : { count: 0, rate: 0 };
  const cfg = { system: SYSTEM, query: WRITE, limit: null, url: URL };
  const out = summaryObject(data, cfg, {
    vus: VUS,
    duration: ITERATIONS ? null : DURATION,
    iterations: ITERATIONS,
    write: WRITE,
    rows_per_request: entry.rows,
    rows: rows.count || 0,
    rows_per_s: Math.round((rows.rate || 0) * 100) / 100,
    max_id: MAX_ID,
    tag: data.setup_data ? data.setup_data.tag : null,
  });
  return summaryOutput(out);
}
