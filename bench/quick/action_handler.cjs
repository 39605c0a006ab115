// A fast action handler for bench/quick/actions_cpu.sh: answers every POST with
// {"ok": true} at once, and GET /calls with how many it answered.
const http = require("http");
let calls = 0;
const server = http.createServer((req, res) => {
  if (req.method === "GET") {
    res.end(String(calls));
    return;
  }
  req.on("data", () => {});
  req.on("end", () => {
    calls++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.argv[2]), "127.0.0.1");
