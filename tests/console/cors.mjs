#!/usr/bin/env node
// Cross-origin calls from real pages in headless Chromium: for each case, a page
// served on `page` (a host name under .test, mapped to 127.0.0.1) fetches the
// GraphQL endpoint with a JSON POST (which the browser preflights) and opens a
// WebSocket to it. The browser decides what the page may read.
//
//   node cors.mjs <chromium-path> <page-port> <cases-json>
//
// cases-json: [{"page": "http://app.foo.test:PORT", "graphql": "http://127.0.0.1:N/v1/graphql"}]
// Prints [{"fetch": "200 {...}" | "blocked: …", "ws": "open" | "error"}] on stdout.
import http from 'node:http';
import puppeteer from 'puppeteer-core';

const [chromium, port, casesJson] = process.argv.slice(2);
if (!chromium || !port || !casesJson) {
  process.stderr.write('usage: node cors.mjs <chromium-path> <page-port> <cases-json>\n');
  process.exit(2);
}
const cases = JSON.parse(casesJson);

// Every host name serves the same empty page: its origin is all that matters.
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<!doctype html><title>page</title>');
});
await new Promise((ok) => server.listen(Number(port), '127.0.0.1', ok));

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--host-resolver-rules=MAP *.test 127.0.0.1'],
});
const results = [];
try {
  for (const c of cases) {
    const page = await browser.newPage();
    await page.goto(c.page + '/', { waitUntil: 'load' });
    results.push(
      await page.evaluate(async (graphql) => {
        const out = {};
        try {
          const res = await fetch(graphql, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ items(order_by: {id: asc}) { id } }' }),
          });
          out.fetch = `${res.status} ${await res.text()}`;
        } catch (e) {
          out.fetch = `blocked: ${e.message}`;
        }
        out.ws = await new Promise((done) => {
          const ws = new WebSocket(graphql.replace(/^http/, 'ws'), 'graphql-transport-ws');
          ws.onopen = () => {
            ws.close();
            done('open');
          };
          ws.onerror = () => done('error');
          setTimeout(() => done('timeout'), 10000);
        });
        return out;
      }, c.graphql),
    );
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
process.stdout.write(JSON.stringify(results) + '\n');
