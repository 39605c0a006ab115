// Subscriptions through the real client libraries (pinned in package.json):
// `graphql-ws` (the graphql-transport-ws protocol) and Apollo's
// `subscriptions-transport-ws` (the legacy graphql-ws protocol), against a running
// Grafton serving the demo dataset.
//
//   node tests/conformance/ws.mjs ws://127.0.0.1:8080/v1/graphql <admin secret>
//
// Prints one line per check; exits 1 at the first that fails.
// `crates/server/tests/conformance.rs` starts a Grafton server and runs this.

import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { SubscriptionClient } from 'subscriptions-transport-ws';

const [url, secret] = process.argv.slice(2);
if (!url || !secret) {
  console.error('usage: node ws.mjs <ws url> <admin secret>');
  process.exit(2);
}
const headers = { 'x-hasura-admin-secret': secret };

function check(ok, what, got) {
  if (!ok) {
    console.error(`FAIL ${what}: ${JSON.stringify(got)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

function within(ms, promise, what) {
  return Promise.race([
    promise,
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms),
    ),
  ]);
}

const VENUE = 'subscription ($id: Int!) { venues_by_pk(id: $id) { id name } }';
const RENAME =
  'mutation ($id: Int!, $name: String!) { update_venues_by_pk(pk_columns: {id: $id}, _set: {name: $name}) { id } }';

// graphql-ws: first result, a mutation over the same socket, the change, errors.
{
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { headers },
    retryAttempts: 0,
  });
  const live = client.iterate({ query: VENUE, variables: { id: 1 } });
  const first = await within(5000, live.next(), 'graphql-ws first result');
  check(first.value?.data?.venues_by_pk?.id === 1, 'graphql-ws: first result', first);

  const name = `graphql-ws ${Date.now()}`;
  const written = await within(
    5000,
    client.iterate({ query: RENAME, variables: { id: 1, name } }).next(),
    'graphql-ws mutation',
  );
  check(written.value?.data?.update_venues_by_pk?.id === 1, 'graphql-ws: mutation over the socket', written);

  const changed = await within(5000, live.next(), 'graphql-ws change');
  check(changed.value?.data?.venues_by_pk?.name === name, 'graphql-ws: the change arrives', changed);
  await live.return();

  let refused;
  try {
    await within(5000, client.iterate({ query: 'subscription { nope }' }).next(), 'graphql-ws error');
  } catch (errors) {
    refused = errors;
  }
  check(
    Array.isArray(refused) && refused[0]?.extensions?.code === 'validation-failed',
    'graphql-ws: a bad document is an error message',
    Array.isArray(refused) ? refused : `close ${refused?.code} ${refused?.reason}`,
  );
  await client.dispose();
}

// subscriptions-transport-ws: first result, then a change made over HTTP.
{
  const client = new SubscriptionClient(
    url,
    { connectionParams: { headers }, reconnect: false },
    WebSocket,
  );
  const results = [];
  let wake = () => {};
  const subscription = client
    .request({ query: VENUE, variables: { id: 2 } })
    .subscribe({
      next(value) {
        results.push(value);
        wake();
      },
      error(e) {
        console.error(`FAIL subscriptions-transport-ws: ${JSON.stringify(e)}`);
        process.exit(1);
      },
    });
  const nth = (n) =>
    within(
      5000,
      new Promise((resolve) => {
        const look = () => (results.length >= n ? resolve(results[n - 1]) : (wake = look));
        look();
      }),
      `subscriptions-transport-ws result ${n}`,
    );
  const first = await nth(1);
  check(first?.data?.venues_by_pk?.id === 2, 'subscriptions-transport-ws: first result', first);

  const name = `legacy ${Date.now()}`;
  const response = await fetch(url.replace(/^ws/, 'http'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: RENAME, variables: { id: 2, name } }),
  });
  check(response.ok, 'subscriptions-transport-ws: mutation over HTTP', response.status);
  const changed = await nth(2);
  check(changed?.data?.venues_by_pk?.name === name, 'subscriptions-transport-ws: the change arrives', changed);
  subscription.unsubscribe();
  client.close();
}
process.exit(0);
