// A fast webhook for bench/quick/events.sh: answers 200 to every POST, counts
// them, and prints the count on GET /count.
const http = require("http");
let count = 0;
const server = http.createServer((req, res) => {
  if (req.method === "GET") {
    res.end(String(count));
    return;
  }
  req.on("data", () => {});
  req.on("end", () => {
    count += 1;
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok");
  });
});
server.listen(Number(process.argv[2]), "127.0.0.1");
