//! CORS as Hasura answers it: every origin by default, a `--cors-domain` list with
//! wildcards, `--disable-cors`; the WebSocket upgrade (never preflighted by
//! browsers) checked against the same list, and cookies on it read only where
//! the list says so. The browser's side of it is in operations/cors.rs.

use crate::client::{Client, Event, TRANSPORT_WS};
use crate::origin::{init, reads_as_user_a};
use crate::{databases, options, DOCUMENTS};
use grafton_server::cors::CorsPolicy;
use serde_json::json;
use std::time::Duration;

const KEY: &str = "a-hardening-secret-of-32-bytes-or-more";
const CONFIG: &str = r#"
tables:
  documents:
    permissions:
      user:
        select: {columns: [id, title], filter: {owner: {_eq: X-Hasura-User-Id}}}
"#;

async fn serve(url: &str, cors: CorsPolicy) -> grafton_server::Running {
    let mut o = options(url, CONFIG);
    o.auth.admin_secret = None;
    o.auth.jwt = Some(
        json!({"type": "HS256", "key": KEY, "header": {"type": "Cookie", "name": "tok"}})
            .to_string(),
    );
    o.http.cors = cors;
    grafton_server::start(&o).await.expect("server starts")
}

fn cookie() -> String {
    let claims = json!({
        "x-hasura-allowed-roles": ["user"],
        "x-hasura-default-role": "user",
        "x-hasura-user-id": "a",
    });
    format!(
        "tok={}",
        crate::common::hs256_token(KEY, Duration::from_secs(3600), claims)
    )
}

async fn preflight(server: &grafton_server::Running, origin: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(
            reqwest::Method::OPTIONS,
            format!("http://{}/v1/graphql", server.addr),
        )
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,x-hasura-role",
        )
        .send()
        .await
        .expect("preflight")
}

async fn post(server: &grafton_server::Running, origin: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("http://{}/v1/graphql", server.addr))
        .header("origin", origin)
        .header("cookie", cookie())
        .json(&json!({"query": "{ documents { id } }"}))
        .send()
        .await
        .expect("post")
}

fn header<'a>(r: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    r.headers().get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_origin_is_allowed_by_default_with_its_credentials() {
    let [sqlite, _] = databases("cors_default", DOCUMENTS);
    let server = serve(&sqlite, CorsPolicy::default()).await;
    let pre = preflight(&server, "http://localhost:3000").await;
    assert!(pre.status().is_success(), "{}", pre.status());
    assert_eq!(
        header(&pre, "access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    assert_eq!(
        header(&pre, "access-control-allow-credentials"),
        Some("true")
    );
    let methods = header(&pre, "access-control-allow-methods").unwrap_or("");
    for m in ["GET", "POST", "OPTIONS"] {
        assert!(methods.contains(m), "{methods}");
    }
    assert_eq!(
        header(&pre, "access-control-allow-headers"),
        Some("content-type,x-hasura-role")
    );
    assert_eq!(header(&pre, "access-control-max-age"), Some("1728000"));

    let answer = post(&server, "http://localhost:3000").await;
    assert_eq!(
        header(&answer, "access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    let exposed = header(&answer, "access-control-expose-headers").unwrap_or("");
    assert!(exposed.contains("x-hasura-query-cache-key"), "{exposed}");
    assert!(answer
        .headers()
        .get_all("vary")
        .iter()
        .any(|v| v.to_str().unwrap_or("").contains("origin")));
    let body: serde_json::Value = answer.json().await.expect("json");
    assert_eq!(body["data"]["documents"], json!([{"id": 1}, {"id": 2}]));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_allows_its_origins_and_wildcards_only() {
    let [sqlite, _] = databases("cors_list", DOCUMENTS);
    let policy = CorsPolicy::parse("https://*.foo.com, http://localhost:3000").expect("list");
    let server = serve(&sqlite, policy).await;
    for allowed in ["http://localhost:3000", "https://app.foo.com"] {
        let pre = preflight(&server, allowed).await;
        assert_eq!(header(&pre, "access-control-allow-origin"), Some(allowed));
        let answer = post(&server, allowed).await;
        assert_eq!(
            header(&answer, "access-control-allow-origin"),
            Some(allowed)
        );
    }
    for refused in [
        "http://localhost:3001",
        "https://foo.com",
        "https://a.b.foo.com",
        "http://app.foo.com",
    ] {
        let pre = preflight(&server, refused).await;
        assert_eq!(
            header(&pre, "access-control-allow-origin"),
            None,
            "{refused}"
        );
        // The request itself is answered (a browser hides the answer from the page).
        let answer = post(&server, refused).await;
        assert_eq!(
            header(&answer, "access-control-allow-origin"),
            None,
            "{refused}"
        );
    }

    // WebSocket: a listed origin's cookie authenticates; another origin is refused
    // at the upgrade, before any message.
    let cookie = cookie();
    let listed = [
        ("origin", "https://app.foo.com"),
        ("cookie", cookie.as_str()),
    ];
    reads_as_user_a(&server, TRANSPORT_WS, &listed).await;
    let refused = Client::open_with(
        &server,
        Some(TRANSPORT_WS),
        &[("origin", "https://evil.example")],
    )
    .await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 400);
        }
        other => panic!("expected 400, got {:?}", other.map(|_| "an open socket")),
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_cors_sends_no_headers_and_reads_no_websocket_cookie() {
    let [sqlite, _] = databases("cors_disabled", DOCUMENTS);
    let server = serve(
        &sqlite,
        CorsPolicy::Disabled {
            ws_read_cookie: false,
        },
    )
    .await;
    let pre = preflight(&server, "http://localhost:3000").await;
    assert_eq!(header(&pre, "access-control-allow-origin"), None);
    let answer = post(&server, "http://localhost:3000").await;
    assert_eq!(header(&answer, "access-control-allow-origin"), None);
    assert_eq!(header(&answer, "access-control-allow-credentials"), None);
    // Even a client without Origin is not authenticated by its cookie.
    let cookie = cookie();
    let with_cookie = [("cookie", cookie.as_str())];
    let (_, first) = init(&server, TRANSPORT_WS, &with_cookie, json!({})).await;
    assert!(matches!(first, Event::Closed(4403, _)), "{first:?}");
    server.stop().await;

    // --ws-read-cookie reads it again.
    let server = serve(
        &sqlite,
        CorsPolicy::Disabled {
            ws_read_cookie: true,
        },
    )
    .await;
    reads_as_user_a(&server, TRANSPORT_WS, &with_cookie).await;
    server.stop().await;
}
