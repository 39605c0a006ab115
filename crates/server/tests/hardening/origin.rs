//! Cross-site WebSocket hijacking: a browser sends its cookies with any page's
//! WebSocket upgrade, so with the JWT in a cookie a page of another site could act
//! as its visitor. Cookies are read only from the server's own origin (or a client
//! that sends no `Origin`, which is no browser); a token the page itself sends in
//! `connection_init` still works from anywhere.

use crate::client::{Client, Event, LEGACY, TRANSPORT_WS};
use crate::{databases, options, DOCUMENTS};
use serde_json::json;
use std::time::Duration;

const KEY: &str = "a-hardening-secret-of-32-bytes-or-more";

const CONFIG: &str = r#"
tables:
  documents:
    permissions:
      user:
        select: {columns: [id, title], filter: {owner: {_eq: X-Hasura-User-Id}}}
        insert: {columns: [id, owner, title, secret], check: {owner: {_eq: X-Hasura-User-Id}}}
"#;

const INSERT: &str = r#"mutation { insert_documents_one(object: {id: 9, owner: "a", title: "x", secret: "y"}) { id } }"#;

fn token() -> String {
    let claims = json!({
        "x-hasura-allowed-roles": ["user"],
        "x-hasura-default-role": "user",
        "x-hasura-user-id": "a",
    });
    crate::common::hs256_token(KEY, Duration::from_secs(3600), claims)
}

/// Opens a socket with these upgrade headers and sends `connection_init` with
/// `payload`: the server's first answer.
pub(crate) async fn init(
    server: &grafton_server::Running,
    protocol: &str,
    headers: &[(&'static str, &str)],
    payload: serde_json::Value,
) -> (Client, Event) {
    let mut c = Client::open_with(server, Some(protocol), headers)
        .await
        .expect("handshake");
    c.send(json!({"type": "connection_init", "payload": payload}))
        .await;
    let first = c.next(Duration::from_secs(5)).await;
    (c, first)
}

/// Whether the server's first answer acknowledged `connection_init`.
pub(crate) fn acked(first: &Event) -> bool {
    matches!(first, Event::Message(m) if m["type"] == "connection_ack")
}

/// A socket opened with `headers` is acknowledged and reads user `a`'s documents.
pub(crate) async fn reads_as_user_a(
    server: &grafton_server::Running,
    protocol: &str,
    headers: &[(&'static str, &str)],
) {
    let (mut c, first) = init(server, protocol, headers, json!({})).await;
    assert!(acked(&first), "{protocol}: {first:?}");
    c.start("q", "{ documents { id } }", json!({})).await;
    assert_eq!(
        c.result("q").await["data"]["documents"],
        json!([{"id": 1}, {"id": 2}])
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_authenticate_a_websocket_only_from_the_servers_own_origin() {
    let [sqlite, _] = databases("hardening_origin", DOCUMENTS);
    let mut o = options(&sqlite, CONFIG);
    o.auth.admin_secret = None;
    o.auth.jwt = Some(
        json!({"type": "HS256", "key": KEY, "header": {"type": "Cookie", "name": "tok"}})
            .to_string(),
    );
    let server = grafton_server::start(&o).await.expect("server starts");
    let cookie = format!("tok={}", token());
    let own = format!("http://{}", server.addr);
    for protocol in [TRANSPORT_WS, LEGACY] {
        // Another site's page, with the visitor's cookie: not authenticated by it.
        // It sends its mutation right behind connection_init.
        let headers = [
            ("origin", "https://evil.example"),
            ("cookie", cookie.as_str()),
        ];
        let mut c = Client::open_with(&server, Some(protocol), &headers)
            .await
            .expect("handshake");
        c.send(json!({"type": "connection_init", "payload": {}}))
            .await;
        c.start("w", INSERT, json!({})).await;
        let first = c.next(Duration::from_secs(5)).await;
        if protocol == LEGACY {
            let Event::Message(m) = first else {
                panic!("{protocol}: {first:?}")
            };
            assert_eq!(m["type"], "connection_error", "{m}");
            assert!(m["payload"].to_string().contains("evil.example"), "{m}");
            let next = c.next(Duration::from_secs(5)).await;
            assert!(
                matches!(next, Event::Closed(4403, _)),
                "{protocol}: {next:?}"
            );
        } else {
            assert!(
                matches!(first, Event::Closed(4403, _)),
                "{protocol}: {first:?}"
            );
        }

        // The server's own page, and a client that is no browser, are.
        for headers in [
            vec![("origin", own.as_str()), ("cookie", cookie.as_str())],
            vec![("cookie", cookie.as_str())],
        ] {
            reads_as_user_a(&server, protocol, &headers).await;
        }

        // A page of another site that sends a token itself is trusted as that token.
        let headers = [("origin", "https://other.example")];
        let payload = json!({"headers": {"Cookie": cookie}});
        let (c, first) = init(&server, protocol, &headers, payload).await;
        assert!(acked(&first), "{protocol}: {first:?}");
        c.close().await;
    }
    // Nothing was written through the refused sockets.
    let conn = rusqlite::Connection::open(&sqlite).expect("open");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM documents", [], |r| r.get(0))
        .expect("count");
    assert_eq!(rows, 4);
}
