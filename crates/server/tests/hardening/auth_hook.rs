//! Webhook auth against a real hook (an HTTP server on 127.0.0.1): GET and POST
//! modes in Hasura's shapes, the session cached as the answer's `Cache-Control`
//! says, role switching only within the roles the hook lists, and every failure
//! of the hook (refusal, error, silence, absence) a clear answer that leaks
//! nothing of the hook's body. Also over WebSocket `connection_init`.

use crate::client::{Event, TRANSPORT_WS};
use crate::origin::{init, reads_as_user_a};
use crate::{databases, options, ADMIN_SECRET, DOCUMENTS};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use grafton_auth::{AuthHook, HookMode};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
tables:
  documents:
    permissions:
      user:
        select: {columns: [id, title], filter: {owner: {_eq: X-Hasura-User-Id}}}
      auditor:
        select: {columns: [id, title, secret], filter: {}}
"#;

/// What the hook saw: calls per credential, and the last request's headers or body.
#[derive(Default)]
struct Seen {
    calls: HashMap<String, usize>,
    last: Value,
}

type Hook = Arc<Mutex<Seen>>;

/// The hook's decision for a credential, as a real session service would make it.
async fn decide(seen: &Hook, credential: &str, last: Value) -> (StatusCode, Json<Value>) {
    {
        let mut seen = seen.lock().unwrap();
        *seen.calls.entry(credential.to_owned()).or_default() += 1;
        seen.last = last;
    }
    let user = |id: &str| json!({"X-Hasura-Role": "user", "X-Hasura-User-Id": id});
    match credential {
        "Bearer alice" => {
            let mut answer = user("a");
            answer["Cache-Control"] = json!("max-age=60");
            (StatusCode::OK, Json(answer))
        }
        "Bearer bob" => (StatusCode::OK, Json(user("b"))),
        "Bearer brief" => {
            let mut answer = user("a");
            answer["Cache-Control"] = json!("max-age=1");
            (StatusCode::OK, Json(answer))
        }
        "Bearer switcher" => {
            let mut answer = user("a");
            answer["X-Hasura-Allowed-Roles"] = json!(["user", "auditor"]);
            (StatusCode::OK, Json(answer))
        }
        "Bearer slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            (StatusCode::OK, Json(user("a")))
        }
        "Bearer broken" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"trace": "db password hunter2"})),
        ),
        _ => (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "who are you"})),
        ),
    }
}

/// Starts the hook; its base URL and what it saw.
async fn hook() -> (String, Hook) {
    let seen = Hook::default();
    let app = Router::new()
        .route(
            "/hook",
            get(|State(seen): State<Hook>, headers: HeaderMap| async move {
                let credential = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                let names: Vec<&str> = headers.keys().map(|k| k.as_str()).collect();
                decide(&seen, &credential, json!(names)).await
            })
            .post(
                |State(seen): State<Hook>, Json(body): Json<Value>| async move {
                    let credential = body["headers"]["authorization"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned();
                    decide(&seen, &credential, body).await
                },
            ),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), seen)
}

async fn serve(url: &str, hook: &str, mode: HookMode) -> grafton_server::Running {
    let mut o = options(url, CONFIG);
    o.auth.auth_hook = Some(AuthHook {
        mode,
        timeout: Duration::from_secs(1),
        ..AuthHook::new(hook)
    });
    grafton_server::start(&o).await.expect("server starts")
}

/// Posts `query` with these headers: status and body.
async fn post(
    server: &grafton_server::Running,
    headers: &[(&str, &str)],
    query: &str,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(server.url())
        .json(&json!({ "query": query }));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

const QUERY: &str = "{ documents(order_by: {id: asc}) { id } }";

fn calls(seen: &Hook, credential: &str) -> usize {
    seen.lock()
        .unwrap()
        .calls
        .get(credential)
        .copied()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_mode_admits_refuses_caches_and_fails_clearly() {
    let [sqlite, _] = databases("auth_hook_get", DOCUMENTS);
    let (url, seen) = hook().await;
    let server = serve(&sqlite, &url, HookMode::Get).await;
    let alice = [("authorization", "Bearer alice"), ("x-app-version", "7")];
    for _ in 0..3 {
        let (status, body) = post(&server, &alice, QUERY).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"]["documents"], json!([{"id": 1}, {"id": 2}]));
    }
    assert_eq!(calls(&seen, "Bearer alice"), 1, "max-age=60: one call");
    // The client's headers reached the hook, Hasura's ignored ones did not.
    let last = seen.lock().unwrap().last.to_string();
    assert!(last.contains("x-app-version"), "{last}");
    assert!(!last.contains("content-type"), "{last}");

    let bob = [("authorization", "Bearer bob")];
    for _ in 0..2 {
        let (_, body) = post(&server, &bob, QUERY).await;
        assert_eq!(body["data"]["documents"], json!([{"id": 3}, {"id": 4}]));
    }
    assert_eq!(
        calls(&seen, "Bearer bob"),
        2,
        "no Cache-Control: no caching"
    );

    // The client's x-hasura-role is honoured only among the hook's allowed roles.
    let (_, body) = post(
        &server,
        &[
            ("authorization", "Bearer bob"),
            ("x-hasura-role", "auditor"),
        ],
        QUERY,
    )
    .await;
    assert_eq!(
        body["data"]["documents"],
        json!([{"id": 3}, {"id": 4}]),
        "{body}"
    );
    let switcher = [
        ("authorization", "Bearer switcher"),
        ("x-hasura-role", "auditor"),
    ];
    let (_, body) = post(&server, &switcher, QUERY).await;
    assert_eq!(
        body["data"]["documents"].as_array().map(Vec::len),
        Some(4),
        "{body}"
    );
    let as_admin = [
        ("authorization", "Bearer switcher"),
        ("x-hasura-role", "admin"),
    ];
    let (status, body) = post(&server, &as_admin, QUERY).await;
    assert_eq!(
        (status, body["errors"][0]["extensions"]["code"].clone()),
        (403, json!("access-denied"))
    );

    let (status, body) = post(&server, &[("authorization", "Bearer mallory")], QUERY).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["errors"][0]["extensions"]["code"], "access-denied");
    assert_eq!(
        body["errors"][0]["message"],
        "Authentication hook unauthorized this request"
    );

    let (status, body) = post(&server, &[("authorization", "Bearer broken")], QUERY).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body["errors"][0]["extensions"]["code"],
        "auth-webhook-error"
    );
    assert!(!body.to_string().contains("hunter2"), "{body}");

    let started = Instant::now();
    let (status, body) = post(&server, &[("authorization", "Bearer slow")], QUERY).await;
    assert_eq!(
        (status, body["errors"][0]["extensions"]["code"].clone()),
        (500, json!("auth-webhook-error"))
    );
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );

    // The admin secret needs no hook.
    let before = seen.lock().unwrap().calls.values().sum::<usize>();
    let (_, body) = post(&server, &[("x-hasura-admin-secret", ADMIN_SECRET)], QUERY).await;
    assert_eq!(body["data"]["documents"].as_array().map(Vec::len), Some(4));
    assert_eq!(seen.lock().unwrap().calls.values().sum::<usize>(), before);

    // Over WebSocket: connection_init's headers go to the hook.
    let (_, first) = init(
        &server,
        TRANSPORT_WS,
        &[],
        json!({"headers": {"Authorization": "Bearer mallory"}}),
    )
    .await;
    assert!(matches!(first, Event::Closed(4403, _)), "{first:?}");
    let (c, first) = init(
        &server,
        TRANSPORT_WS,
        &[],
        json!({"headers": {"Authorization": "Bearer bob"}}),
    )
    .await;
    assert!(crate::origin::acked(&first), "{first:?}");
    drop(c);
    reads_as_user_a(&server, TRANSPORT_WS, &[("authorization", "Bearer alice")]).await;
    // A socket whose session the hook allowed for one second ends after it, as
    // one whose JWT expires.
    let brief = json!({"headers": {"Authorization": "Bearer brief"}});
    let (mut c, first) = init(&server, TRANSPORT_WS, &[], brief).await;
    assert!(crate::origin::acked(&first), "{first:?}");
    c.start("s", "subscription { documents { id } }", json!({}))
        .await;
    let ended = loop {
        match c.next(Duration::from_secs(5)).await {
            Event::Closed(code, _) => break code,
            Event::Message(m) if m["type"] == "error" => {
                assert_eq!(m["payload"][0]["extensions"]["code"], "invalid-jwt", "{m}");
            }
            Event::Message(_) => continue,
            other => panic!("the socket outlived its session: {other:?}"),
        }
    };
    assert_eq!(ended, 4403);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_mode_sends_headers_and_the_graphql_request() {
    let [sqlite, _] = databases("auth_hook_post", DOCUMENTS);
    let (url, seen) = hook().await;
    let server = serve(&sqlite, &url, HookMode::Post).await;
    let (status, body) = post(&server, &[("authorization", "Bearer bob")], QUERY).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["documents"], json!([{"id": 3}, {"id": 4}]));
    let last = seen.lock().unwrap().last.clone();
    assert_eq!(last["request"]["query"], QUERY, "{last}");
    assert_eq!(last["headers"]["authorization"], "Bearer bob", "{last}");
    let (status, _) = post(&server, &[("authorization", "Bearer mallory")], QUERY).await;
    assert_eq!(status, 401);
    // Malformed JSON is still refused as such (the hook is never asked about it).
    let response = reqwest::Client::new()
        .post(server.url())
        .header("content-type", "application/json")
        .header("authorization", "Bearer bob")
        .body("{not json")
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 400);
    assert_eq!(calls(&seen, "Bearer bob"), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_is_down_is_a_clear_error() {
    let [sqlite, _] = databases("auth_hook_down", DOCUMENTS);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let server = serve(
        &sqlite,
        &format!("http://127.0.0.1:{closed}/hook"),
        HookMode::Get,
    )
    .await;
    let (status, body) = post(&server, &[("authorization", "Bearer alice")], QUERY).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body["errors"][0]["extensions"]["code"],
        "auth-webhook-error"
    );
    assert_eq!(
        body["errors"][0]["message"],
        "webhook authentication request failed"
    );
    assert!(
        !body.to_string().contains(&closed.to_string()),
        "no URL in the answer: {body}"
    );
    server.stop().await;
}
