#!/usr/bin/env node
// Headless-browser check of the Grafton console (GraphiQL served at /console).
//
//   node console.mjs <base-url> <admin-secret-or-empty> <chromium-path> [options]
//
//   --query TEXT       operation typed into the query editor
//                      (env CONSOLE_QUERY; default "{ __typename }")
//   --expect TEXT      text the result pane must contain; repeatable
//                      (env CONSOLE_EXPECT; default "\"data\"")
//   --doc-field NAME   field the docs and the explorer must list on the
//                      query root type; repeatable (env CONSOLE_DOC_FIELDS,
//                      comma-separated; default: only require some field)
//   --timeout MS       limit for each wait (env CONSOLE_TIMEOUT; default 30000)
//   --screenshot PATH  save a PNG of the page at the end, pass or fail
//
// The page must work offline: every request for a host other than the
// server's host:port is aborted and recorded, and any such request fails the
// run. Prints a JSON summary on stdout; exits 1 on any failure (the reason is
// in the summary's "error" and on stderr), 2 on bad usage.
import { parseArgs } from 'node:util';
import puppeteer from 'puppeteer-core';

const USAGE =
  'usage: node console.mjs <base-url> <admin-secret-or-empty> <chromium-path> ' +
  '[--query Q] [--expect TEXT]... [--doc-field NAME]... [--timeout MS] [--screenshot PATH]';

// Selectors (GraphiQL 4.1, CodeMirror 5). Each .CodeMirror element carries
// its editor instance as the `.CodeMirror` property.
const SEL = {
  queryEditor: '.graphiql-container .graphiql-query-editor .CodeMirror',
  headersTab: '.graphiql-editor-tools button[data-name="headers"]',
  // The tool section holds the variables and the headers editors; the one
  // not shown has the class "hidden".
  toolEditor: '.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror',
  // localStorage key the query editor's (debounced) change handler writes.
  queryStorageKey: 'graphiql:query',
  runButton: 'button.graphiql-execute-button',
  resultEditor: '.graphiql-response .result-window .CodeMirror',
  docsButton: '.graphiql-sidebar button[aria-label="Show Documentation Explorer"]',
  docs: '.graphiql-doc-explorer',
  docsRootType: '.graphiql-doc-explorer-root-type',
  docsTypeLink: 'a.graphiql-doc-explorer-type-name',
  docsTitle: '.graphiql-doc-explorer-title',
  docsField: '.graphiql-doc-explorer-field-name',
  explorerButton: '.graphiql-sidebar button[aria-label="Show GraphiQL Explorer"]',
  // One div per operation; a top-level field's node sits directly in it, or
  // in a wrapper div when selected (its subfields then follow the node).
  explorerOperation: '.graphiql-explorer-root > div > div',
  explorerTopField: ':scope > .graphiql-explorer-node > [data-field-name], :scope > div > .graphiql-explorer-node > [data-field-name]',
};

function usage(message) {
  process.stderr.write(`console.mjs: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parse() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        query: { type: 'string' },
        expect: { type: 'string', multiple: true },
        'doc-field': { type: 'string', multiple: true },
        timeout: { type: 'string' },
        screenshot: { type: 'string' },
      },
    });
  } catch (e) {
    usage(e.message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 3) usage('expected 3 positional arguments');
  const [base, secret, chromium] = positionals;
  let baseUrl;
  try {
    baseUrl = new URL(base);
  } catch {
    usage(`not a URL: ${base}`);
  }
  if (!/^https?:$/.test(baseUrl.protocol)) usage(`not an http(s) URL: ${base}`);
  if (!chromium) usage('the chromium path is empty');
  const env = process.env;
  const list = (s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []);
  const timeout = Number(values.timeout ?? env.CONSOLE_TIMEOUT ?? 30000);
  if (!Number.isFinite(timeout) || timeout <= 0) usage(`bad --timeout: ${values.timeout}`);
  return {
    baseUrl,
    secret,
    chromium,
    query: values.query ?? env.CONSOLE_QUERY ?? '{ __typename }',
    expect: values.expect ?? (env.CONSOLE_EXPECT ? [env.CONSOLE_EXPECT] : ['"data"']),
    docFields: values['doc-field'] ?? list(env.CONSOLE_DOC_FIELDS),
    timeout,
    screenshot: values.screenshot ?? null,
  };
}

class Failure extends Error {}

async function main() {
  const opts = parse();
  const consoleUrl = new URL('/console', opts.baseUrl).toString();
  const graphqlPath = '/v1/graphql';
  const started = Date.now();
  const summary = {
    ok: false,
    url: consoleUrl,
    browser: null,
    title: null,
    steps: [],
    externalRequests: [],
    httpErrors: [],
    refusedWithoutSecret: 0,
    pageErrors: [],
    consoleErrors: [],
    queryRequests: 0,
    webSockets: 0,
    querySentSecret: null,
    result: null,
    docsRootType: null,
    docsFields: [],
    explorerFields: [],
    error: null,
    ms: 0,
  };
  const step = (name) => summary.steps.push(name);

  const browser = await puppeteer.launch({
    executablePath: opts.chromium,
    headless: true,
    pipe: true,
    args: [
      '--no-sandbox', // CI runs as root
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  let page;
  try {
    summary.browser = await browser.version();
    page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    page.setDefaultTimeout(opts.timeout);

    // Anything not on the server's own host:port is aborted and recorded.
    const isLocal = (u) => u.host === opts.baseUrl.host;
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      const raw = req.url();
      let u;
      try {
        u = new URL(raw);
      } catch {
        summary.externalRequests.push(raw);
        req.abort('blockedbyclient');
        return;
      }
      if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') {
        req.continue();
      } else if ((u.protocol === 'http:' || u.protocol === 'https:') && isLocal(u)) {
        if (u.pathname === graphqlPath && req.method() === 'POST') {
          const body = req.postData() || '';
          if (!body.includes('IntrospectionQuery')) {
            summary.queryRequests += 1;
            if (opts.secret !== '') {
              summary.querySentSecret = req.headers()['x-hasura-admin-secret'] === opts.secret;
            }
          }
        }
        req.continue();
      } else {
        summary.externalRequests.push(raw);
        req.abort('blockedbyclient');
      }
    });
    // WebSockets bypass request interception: watch for them over CDP.
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    cdp.on('Network.webSocketCreated', ({ url }) => {
      try {
        if (isLocal(new URL(url))) {
          summary.webSockets += 1;
          return;
        }
      } catch {
        // unparsable: record it
      }
      summary.externalRequests.push(url);
    });
    page.on('response', (res) => {
      let u;
      try {
        u = new URL(res.url());
      } catch {
        return;
      }
      if (!isLocal(u) || res.status() < 400) return;
      // Before the secret is typed in, the page's first introspection is refused
      // (401): that is the server doing its job, not a fault of the page.
      const sentSecret = 'x-hasura-admin-secret' in res.request().headers();
      if (res.status() === 401 && !sentSecret) {
        summary.refusedWithoutSecret += 1;
        return;
      }
      summary.httpErrors.push(`${res.status()} ${res.url()}`);
    });
    page.on('pageerror', (e) => summary.pageErrors.push(String(e && e.message ? e.message : e)));
    page.on('console', (m) => {
      if (m.type() === 'error') summary.consoleErrors.push(m.text());
    });

    step('load');
    const res = await page.goto(consoleUrl, { waitUntil: 'load', timeout: opts.timeout });
    if (!res || !res.ok()) throw new Failure(`GET ${consoleUrl} answered ${res ? res.status() : 'nothing'}`);
    summary.title = await page.title();
    if (summary.title !== 'Grafton console') throw new Failure(`unexpected page title ${JSON.stringify(summary.title)}`);

    step('render');
    await waitFor(page, opts, 'GraphiQL to render its query editor', (sel) => {
      const el = document.querySelector(sel);
      return !!(el && el.CodeMirror);
    }, SEL.queryEditor);

    if (opts.secret !== '') {
      step('headers');
      await page.click(SEL.headersTab);
      const headers = JSON.stringify({ 'x-hasura-admin-secret': opts.secret });
      await waitFor(page, opts, 'the headers editor', (sel) => {
        const el = document.querySelector(sel);
        return !!(el && el.CodeMirror);
      }, SEL.toolEditor);
      await page.evaluate((sel, text) => document.querySelector(sel).CodeMirror.setValue(text), SEL.toolEditor, headers);
      const now = await page.evaluate((sel) => document.querySelector(sel).CodeMirror.getValue(), SEL.toolEditor);
      if (now !== headers) throw new Failure(`the headers editor holds ${JSON.stringify(now)} after setting it`);
    }

    step('query');
    await page.evaluate((sel, q) => document.querySelector(sel).CodeMirror.setValue(q), SEL.queryEditor, opts.query);
    // GraphiQL parses the query (and so decides between HTTP and WebSocket)
    // in a change handler debounced by 100 ms, which also saves the text to
    // localStorage; running before that would run the previous document.
    await waitFor(page, opts, 'GraphiQL to take in the query', (key, q) => localStorage.getItem(key) === q, SEL.queryStorageKey, opts.query);
    // Clear the result pane so only this run's answer can match.
    await page.evaluate((sel) => {
      const el = document.querySelector(sel);
      if (el && el.CodeMirror) el.CodeMirror.setValue('');
    }, SEL.resultEditor);

    step('run');
    await page.click(SEL.runButton);
    let matched = true;
    try {
      await page.waitForFunction(
        (sel, expect) => {
          const el = document.querySelector(sel);
          const text = el && el.CodeMirror ? el.CodeMirror.getValue() : '';
          return text !== '' && expect.every((e) => text.includes(e));
        },
        { timeout: opts.timeout, polling: 100 },
        SEL.resultEditor,
        opts.expect,
      );
    } catch (e) {
      if (!(e && e.name === 'TimeoutError')) throw e;
      matched = false;
    }
    summary.result = await page
      .evaluate((sel) => {
        const el = document.querySelector(sel);
        return el && el.CodeMirror ? el.CodeMirror.getValue() : null;
      }, SEL.resultEditor)
      .catch(() => null);
    if (!matched) {
      const missing = opts.expect.filter((e) => !(summary.result || '').includes(e));
      throw new Failure(
        `the result pane did not contain ${missing.map((e) => JSON.stringify(e)).join(' and ')} within ${opts.timeout} ms; ` +
          `it holds: ${summary.result ? JSON.stringify(summary.result.slice(0, 2000)) : '(nothing)'}`,
      );
    }
    if (summary.queryRequests === 0 && summary.webSockets === 0) {
      throw new Failure(`running the query sent nothing to ${graphqlPath}`);
    }
    if (opts.secret !== '' && summary.queryRequests > 0 && !summary.querySentSecret) {
      throw new Failure('the query was sent without the x-hasura-admin-secret from the headers editor');
    }

    step('docs');
    await page.click(SEL.docsButton);
    // Wait for the schema (the introspection re-runs once the secret is in
    // the headers editor), then open the query root type.
    const rootType = await waitFor(page, opts, 'the docs to list the query root type', (s) => {
      const docs = document.querySelector(s.docs);
      if (!docs) return false;
      for (const span of docs.querySelectorAll(s.docsRootType)) {
        if (span.textContent.trim() === 'query') {
          const link = span.parentElement.querySelector(s.docsTypeLink);
          if (link) return link.textContent.trim();
        }
      }
      return false;
    }, SEL);
    summary.docsRootType = rootType;
    await page.evaluate((s) => {
      for (const span of document.querySelectorAll(`${s.docs} ${s.docsRootType}`)) {
        if (span.textContent.trim() === 'query') span.parentElement.querySelector(s.docsTypeLink).click();
      }
    }, SEL);
    await waitFor(page, opts, `the docs to show the fields of ${rootType}`, (s, root) => {
      const title = document.querySelector(`${s.docs} ${s.docsTitle}`);
      return !!title && title.textContent.trim() === root && document.querySelectorAll(`${s.docs} ${s.docsField}`).length > 0;
    }, SEL, rootType);
    summary.docsFields = await page.evaluate(
      (s) => [...document.querySelectorAll(`${s.docs} ${s.docsField}`)].map((a) => a.textContent.trim()),
      SEL,
    );
    const missingDocs = opts.docFields.filter((f) => !summary.docsFields.includes(f));
    if (missingDocs.length) {
      throw new Failure(`the docs for ${rootType} lack ${missingDocs.join(', ')} (listed: ${summary.docsFields.join(', ')})`);
    }

    step('explorer');
    await page.click(SEL.explorerButton);
    summary.explorerFields = await waitFor(page, opts, 'the explorer to list root fields', (s) => {
      const names = [...document.querySelectorAll(s.explorerOperation)].flatMap((op) =>
        [...op.querySelectorAll(s.explorerTopField)].map((e) => e.getAttribute('data-field-name')),
      );
      return names.length > 0 ? names : false;
    }, SEL);
    const missingExplorer = opts.docFields.filter((f) => !summary.explorerFields.includes(f));
    if (missingExplorer.length) {
      throw new Failure(`the explorer lacks ${missingExplorer.join(', ')}`);
    }

    step('offline');
    if (summary.externalRequests.length) {
      throw new Failure(`the page tried to reach other hosts: ${summary.externalRequests.join(', ')}`);
    }
    if (summary.httpErrors.length) throw new Failure(`HTTP errors: ${summary.httpErrors.join(', ')}`);
    if (summary.pageErrors.length) throw new Failure(`uncaught page errors: ${summary.pageErrors.join(' | ')}`);
    summary.ok = true;
  } catch (e) {
    if (e instanceof Failure) summary.error = e.message;
    else summary.error = `at step ${summary.steps.at(-1) || 'launch'}: ${e && e.message ? e.message : e}`;
    // Report the offline violations too, whatever failed first.
    if (summary.externalRequests.length && !summary.error.includes('other hosts')) {
      summary.error += `; also, the page tried to reach other hosts: ${summary.externalRequests.join(', ')}`;
    }
  } finally {
    if (opts.screenshot && page) await page.screenshot({ path: opts.screenshot }).catch(() => {});
    await browser.close().catch(() => {});
  }
  summary.ms = Date.now() - started;
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (!summary.ok) {
    process.stderr.write(`console.mjs: FAILED: ${summary.error}\n`);
    process.exit(1);
  }
  process.stderr.write(`console.mjs: ok (${summary.ms} ms)\n`);
}

// Polls fn(...args) in the page until it returns something truthy; a timeout
// becomes a Failure naming what was awaited.
async function waitFor(page, opts, what, fn, ...args) {
  try {
    const handle = await page.waitForFunction(fn, { timeout: opts.timeout, polling: 100 }, ...args);
    return await handle.jsonValue();
  } catch (e) {
    if (e && e.name === 'TimeoutError') throw new Failure(`timed out after ${opts.timeout} ms waiting for ${what}`);
    throw e;
  }
}

main().catch((e) => {
  process.stderr.write(`console.mjs: ${e && e.stack ? e.stack : e}\n`);
  process.stdout.write(`${JSON.stringify({ ok: false, error: String(e && e.message ? e.message : e) })}\n`);
  process.exit(1);
});
