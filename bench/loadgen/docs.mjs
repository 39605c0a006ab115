// Writes the load client's document files from bench/k6/queries.js, so loadgen
// and k6 send the same requests: for each query and dialect, the document and
// SETS variable sets drawn by the query's own generator.
//
//   node bench/loadgen/docs.mjs OUT_DIR [LIMIT=50] [SETS=4096]
//
// OUT_DIR/<system>-<query>.json = {"query": "…", "variables": [{…}, …]}
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [out, limitArg, setsArg] = process.argv.slice(2);
if (!out) {
  console.error('usage: node docs.mjs OUT_DIR [LIMIT] [SETS]');
  process.exit(2);
}
const limit = Number(limitArg || 50);
const sets = Number(setsArg || 4096);
mkdirSync(out, { recursive: true });
// queries.js is an ES module with a .js name and no package.json saying so: import
// a copy named .mjs (works on every Node version).
const here = dirname(fileURLToPath(import.meta.url));
const copy = join(out, 'queries.mjs');
copyFileSync(join(here, '..', 'k6', 'queries.js'), copy);
const { QUERIES, SYSTEMS } = await import(pathToFileURL(copy).href);
let n = 0;
for (const [name, entry] of Object.entries(QUERIES)) {
  for (const system of SYSTEMS) {
    const e = entry[system];
    if (!e) continue;
    const variables = [];
    for (let i = 0; i < sets; i++) variables.push(e.variables(limit, Math.random));
    writeFileSync(join(out, `${system}-${name}.json`), JSON.stringify({ query: e.query, variables }));
    n++;
  }
}
console.log(`${n} document files in ${out}`);
