// Runs the official GraphQL-over-HTTP server audit (npm `graphql-http`, pinned in
// package.json) against a running GraphQL endpoint.
//
//   node tests/conformance/audit.mjs http://127.0.0.1:8080/v1/graphql
//
// Prints one line per audit (`ok`, `warn`, `notice` or `error`, with the audit id,
// name and the reason it failed). Exits 1 if any MUST audit fails (or an audit
// crashes), 0 otherwise: SHOULD failures are warnings, MAY failures notices.
// `crates/server/tests/conformance.rs` starts a Grafton server and runs this.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs <graphql endpoint url>');
  process.exit(2);
}
if (!existsSync(join(here, 'node_modules', 'graphql-http'))) {
  console.error(
    `graphql-http is not installed: run \`npm ci\` in ${here} first`,
  );
  process.exit(2);
}
const { serverAudits } = await import('graphql-http');

const pkg = JSON.parse(
  await (await import('node:fs/promises')).readFile(
    join(here, 'node_modules', 'graphql-http', 'package.json'),
    'utf8',
  ),
);
console.log(`graphql-http ${pkg.version} server audit of ${url}`);

/** A short, one-line view of a failing response, for the report. */
async function describe(response) {
  if (!response || typeof response.clone !== 'function') return '';
  let body = '';
  try {
    body = await response.clone().text();
  } catch {
    // The audit already read the body; status and content type still help.
  }
  body = body.replace(/\s+/g, ' ');
  if (body.length > 200) body = `${body.slice(0, 200)}…`;
  const type = response.headers.get('content-type') ?? '(none)';
  return ` [HTTP ${response.status}, content-type: ${type}${body ? `, body: ${body}` : ''}]`;
}

const counts = { ok: 0, notice: 0, warn: 0, error: 0 };
const failures = [];
for (const audit of serverAudits({ url })) {
  let result;
  try {
    result = await audit.fn();
  } catch (err) {
    // graphql-http treats anything other than an assertion failure as fatal.
    result = {
      id: audit.id,
      name: audit.name,
      status: 'error',
      reason: `audit crashed: ${err?.stack ?? err}`,
    };
  }
  counts[result.status] += 1;
  if (result.status === 'ok') {
    console.log(`ok     ${result.id} ${result.name}`);
  } else {
    const detail = await describe(result.response);
    console.log(
      `${result.status.padEnd(6)} ${result.id} ${result.name}: ${result.reason}${detail}`,
    );
    if (result.status === 'error') failures.push(result);
  }
}

console.log(
  `\n${counts.ok} ok, ${counts.error} MUST failures, ${counts.warn} SHOULD warnings, ${counts.notice} MAY notices`,
);
if (failures.length > 0) {
  console.log('MUST failures:');
  for (const f of failures) console.log(`  ${f.id} ${f.name}: ${f.reason}`);
  process.exit(1);
}
