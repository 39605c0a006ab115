// The seed documents' capacity test (Phrag's method): ramp to TARGET virtual
// users over RAMP, hold TARGET for HOLD; each VU sends one request, then
// sleeps 2 s. The run passes when p95 http_req_duration < 500 ms, < 1% of
// requests fail at the HTTP level, and < 1% fail at all (GraphQL errors
// included). The capacity of a system is the largest TARGET that passes (the
// search over TARGET is the orchestrator's job).
//
//   k6 run -e URL=http://127.0.0.1:8080/v1/graphql -e SYSTEM=grafton -e QUERY=venues \
//          -e TARGET=500 [-e RAMP=30s] [-e HOLD=30s] [-e LIMIT=50] [-e SUMMARY=out.json] bench/k6/capacity.js
//
// k6 exits 99 when a threshold fails; the JSON's `passed` is the verdict, and
// the file is written in both cases (see README.md).
import { sleep } from 'k6';
import { config, positiveInt, send, summaryObject, summaryOutput, durationSeconds, TREND_STATS } from './lib.js';

const cfg = config();
const TARGET = positiveInt('TARGET', 50);
const RAMP = __ENV.RAMP || '30s';
const HOLD = __ENV.HOLD || '30s';
for (const [k, v] of [['RAMP', RAMP], ['HOLD', HOLD]]) {
  if (durationSeconds(v) === null) throw new Error('env ' + k + ' must be a k6 duration like 30s, got "' + v + '"');
}
const THINK_S = 2;

export const THRESHOLDS = {
  http_req_failed: ['rate<0.01'],
  http_req_duration: ['p(95)<500'],
  graphql_errors: ['rate<0.01'],
};

export const options = {
  stages: [
    { duration: RAMP, target: TARGET },
    { duration: HOLD, target: TARGET },
  ],
  thresholds: THRESHOLDS,
  discardResponseBodies: false,
  summaryTrendStats: TREND_STATS,
  tags: { system: cfg.system, query: cfg.query },
};

export default function () {
  send(cfg);
  sleep(THINK_S);
}

/**
 * Each threshold's verdict. k6 fills metrics[m].thresholds[expr].ok when it
 * evaluated thresholds; with `--no-thresholds` it does not, and the same
 * expressions are evaluated here from the metric values instead.
 */
function verdicts(data) {
  const out = {};
  for (const metric in THRESHOLDS) {
    const m = data.metrics[metric];
    for (const expr of THRESHOLDS[metric]) {
      let ok;
      if (m && m.thresholds && m.thresholds[expr]) {
        ok = m.thresholds[expr].ok;
      } else {
        const mm = /^(rate|p\(95\))<(\d+(?:\.\d+)?)$/.exec(expr);
        const value = m && mm ? m.values[mm[1]] : undefined;
        ok = typeof value === 'number' ? value < Number(mm[2]) : false;
      }
      out[metric + ': ' + expr] = ok;
    }
  }
  return out;
}

export function handleSummary(data) {
  const thresholds = verdicts(data);
  const requests = data.metrics.http_reqs ? data.metrics.http_reqs.values.count : 0;
  let passed = requests > 0;
  for (const k in thresholds) passed = passed && thresholds[k];
  return summaryOutput(summaryObject(data, cfg, {
    vus: TARGET,
    target_vus: TARGET,
    ramp: RAMP,
    hold: HOLD,
    think_s: THINK_S,
    passed: passed,
    thresholds: thresholds,
  }));
}
