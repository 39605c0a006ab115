// Grafton console: GraphiQL 4 (CodeMirror 5) with the explorer plugin.
// Built by ../build.sh into ../dist/ and served by the server at /console.
import React, { useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { useEditorContext, useSchemaStore } from '@graphiql/react';
import { explorerPlugin } from '@graphiql/plugin-explorer';
import { createGraphiQLFetcher } from '@graphiql/toolkit';

import 'graphiql/style.css';
import '@graphiql/plugin-explorer/style.css';
import './index.css';

// Everything is relative to the page's own origin: no credentials or hosts
// are baked in. `/v1/graphql` serves POST JSON and graphql-transport-ws.
const url = new URL('/v1/graphql', window.location.href).toString();
const subscriptionUrl =
  (window.location.protocol === 'https:' ? 'wss://' : 'ws://') +
  window.location.host +
  '/v1/graphql';

// Queries and mutations are POSTed with the headers editor's JSON as HTTP
// headers. A subscription opens a graphql-ws connection whose
// connection_init payload carries the same headers as top-level keys.
const fetcher = createGraphiQLFetcher({
  url,
  subscriptionUrl,
  enableIncrementalDelivery: false,
});

const explorer = explorerPlugin();

const defaultQuery = `# Welcome to the Grafton console.
#
# Operations go to /v1/graphql on this server
# (subscriptions over a WebSocket to the same path).
#
# To act as admin, open the "Headers" tab below
# and enter:
#
#   { "x-hasura-admin-secret": "<admin secret>" }
#
# Headers are kept in this browser's localStorage,
# so they survive a reload. The schema (docs,
# explorer, autocompletion) is re-fetched whenever
# the headers change.
#
# Ctrl-Enter runs the query; Ctrl-Space completes.

query {
  __typename
}
`;

// GraphiQL introspects once on load, before the headers editor (and so any
// persisted admin secret) exists, and never again when the headers change.
// This re-runs the introspection with the current headers whenever they hold
// valid JSON that differs from what was last used, one request at a time so
// a stale answer cannot overwrite a newer one. Renders nothing.
function IntrospectOnHeaders() {
  const editors = useEditorContext();
  const headerEditor = editors ? editors.headerEditor : null;
  const introspect = useSchemaStore((s) => s.introspect);
  const isFetching = useSchemaStore((s) => s.isFetching);
  const [wanted, setWanted] = useState(false);
  const last = useRef(null);

  useEffect(() => {
    if (!headerEditor) return undefined;
    let timer = null;
    const check = () => {
      const text = headerEditor.getValue().trim();
      let key;
      try {
        key = JSON.stringify(text ? JSON.parse(text) : {});
      } catch {
        return; // half-typed JSON: wait for more
      }
      const first = last.current === null;
      if (key === last.current) return;
      last.current = key;
      // The load-time introspection already ran without headers.
      if (first && key === '{}') return;
      setWanted(true);
    };
    check();
    const onChange = () => {
      clearTimeout(timer);
      timer = setTimeout(check, 400);
    };
    headerEditor.on('change', onChange);
    return () => {
      clearTimeout(timer);
      headerEditor.off('change', onChange);
    };
  }, [headerEditor]);

  useEffect(() => {
    if (wanted && !isFetching) {
      setWanted(false);
      introspect();
    }
  }, [wanted, isFetching, introspect]);

  return null;
}

function App() {
  return (
    <GraphiQL
      fetcher={fetcher}
      plugins={[explorer]}
      defaultQuery={defaultQuery}
      defaultHeaders=""
      isHeadersEditorEnabled={true}
      shouldPersistHeaders={true}
      defaultEditorToolsVisibility="headers"
    >
      <GraphiQL.Logo>
        Grafton
        <IntrospectOnHeaders />
      </GraphiQL.Logo>
    </GraphiQL>
  );
}

createRoot(document.getElementById('graphiql')).render(<App />);
