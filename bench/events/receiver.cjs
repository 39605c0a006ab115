// The events scenario's webhook (bench/lib/run_events.py): answers 200 to every
// POST at once and appends one line per call to LOG_FILE:
//   <event id> <run> <payload created_at> <received, epoch ms with µs>
// (run: the inserted row's `run` column). Lines are buffered and written every
// 100 ms, and on SIGTERM / SIGINT before it exits (calls in flight then go
// unanswered: the sender sees a reset, as from a webhook that crashed).
// GET /count answers {"calls": n} after writing what it holds.
//   node bench/events/receiver.cjs PORT LOG_FILE
const http = require("http");
const fs = require("fs");
const { performance } = require("perf_hooks");

const port = Number(process.argv[2]);
const file = process.argv[3];
let lines = [];
let calls = 0;

function flush() {
  if (lines.length) {
    fs.appendFileSync(file, lines.join(""));
    lines = [];
  }
}
setInterval(flush, 100).unref();

const server = http.createServer((req, res) => {
  if (req.method === "GET") {
    flush();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ calls }));
    return;
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const now = performance.timeOrigin + performance.now();
    let id = "-", run = "-", created = "-";
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      id = String(body.id);
      created = String(body.created_at);
      const row = body.event && body.event.data && body.event.data.new;
      if (row && row.run !== undefined && row.run !== null) run = String(row.run);
    } catch (e) {
      // recorded with dashes: a call whose body was not an event
    }
    lines.push(`${id} ${run} ${created} ${now.toFixed(3)}\n`);
    calls += 1;
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
});
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    flush();
    process.exit(0);
  });
}
server.listen(port, "127.0.0.1", () => console.log(`listening on 127.0.0.1:${port}`));
