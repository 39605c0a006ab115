// Closed-loop, fixed concurrency: VUS virtual users each send the next request
// as soon as the previous answer arrives (no think time), for DURATION.
//
//   k6 run -e URL=http://127.0.0.1:8080/v1/graphql -e SYSTEM=grafton -e QUERY=venues \
//          -e VUS=50 -e DURATION=30s [-e LIMIT=50] [-e HEADERS='[{"x-hasura-role":"user"}]'] \
//          [-e SUMMARY=out.json] bench/k6/closed.js
//
// HEADERS (optional): a JSON array of header objects; VU v sends set (v - 1) % length.
// handleSummary writes the JSON described in README.md to $SUMMARY (stdout if unset).
import { config, positiveInt, send, summaryObject, summaryOutput, durationSeconds, TREND_STATS } from './lib.js';

const cfg = config();
const VUS = positiveInt('VUS', 10);
const DURATION = __ENV.DURATION || '10s';
if (durationSeconds(DURATION) === null) throw new Error('env DURATION must be a k6 duration like 10s or 1m, got "' + DURATION + '"');

export const options = {
  scenarios: {
    closed: {
      executor: 'constant-vus',
      vus: VUS,
      duration: DURATION,
      gracefulStop: '10s',
    },
  },
  // The body is needed to look for "errors"; requests ask for text explicitly.
  discardResponseBodies: false,
  summaryTrendStats: TREND_STATS,
  tags: { system: cfg.system, query: cfg.query },
};

export default function () {
  send(cfg);
}

export function handleSummary(data) {
  return summaryOutput(summaryObject(data, cfg, { vus: VUS, duration: DURATION, header_sets: cfg.headerSets.length }));
}
