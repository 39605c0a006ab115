// Clients that subscribe to large live answers and never read them (issue 27):
// CONNECTIONS WebSockets, each with SUBSCRIPTIONS subscriptions to `blobs`, the
// socket paused after connection_ack so the server's answers pile up. Runs for
// SECONDS, then exits. VARY=1 gives every subscription its own variable value. Used by bench/quick/live_hogs.sh, which samples the
// server's RSS meanwhile.
//   node live_hogs.cjs ws://127.0.0.1:PORT/v1/graphql SECRET CONNECTIONS SUBSCRIPTIONS SECONDS
const WebSocket = require('ws'); // NODE_PATH: bench/.tools/node/node_modules

const [url, secret, connections, subscriptions, seconds] = process.argv.slice(2);
const sockets = [];
for (let c = 0; c < Number(connections); c++) {
  const ws = new WebSocket(url, 'graphql-transport-ws');
  ws.on('error', () => {});
  ws.on('open', () => ws.send(JSON.stringify({
    type: 'connection_init', payload: { headers: { 'x-hasura-admin-secret': secret } },
  })));
  ws.on('message', (data) => {
    if (JSON.parse(data.toString()).type !== 'connection_ack') return;
    for (let s = 0; s < Number(subscriptions); s++) {
      // VARY=1: every subscription its own variable value (the same rows), so no two
      // share an answer and the server must compute each one.
      const payload = process.env.VARY === '1'
        ? { query: 'subscription ($n: Int!) { blobs(where: {id: {_gt: $n}}) { id body } }',
            variables: { n: -(c * 1000 + s) } }
        : { query: `subscription { blobs(where: {id: {_gt: ${s % 3}}}) { id body } }` };
      ws.send(JSON.stringify({ id: String(s), type: 'subscribe', payload }));
    }
    // Never read again: the answers wait in the server.
    ws._socket.pause();
  });
  sockets.push(ws);
}
setTimeout(() => process.exit(0), Number(seconds) * 1000);
