//! GraphQL over HTTP: POST and GET, media types, the body limit, other methods and
//! paths, concurrent requests.

use crate::common::*;
use reqwest::StatusCode;
use serde_json::{json, Value};

pub(crate) const GRAPHQL_RESPONSE: &str = "application/graphql-response+json";

/// Sends a request and returns status, content type and body text.
pub(crate) async fn send(request: reqwest::RequestBuilder) -> (StatusCode, String, String) {
    let response = request.send().await.expect("request");
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, content_type, response.text().await.expect("body"))
}

pub(crate) fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

pub(crate) fn post_raw(
    server: Server,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::RequestBuilder {
    client()
        .post(graphql_url(server))
        .header("content-type", content_type)
        .body(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_json_answers_json() {
    for server in BACKENDS {
        let (status, ct, body) = send(post_raw(
            server,
            "application/json",
            r#"{"query": "{ venues_by_pk(id: 1) { id } }"}"#,
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{server:?}");
        assert!(ct.starts_with("application/json"), "{server:?}: {ct}");
        assert_eq!(body, r#"{"data":{"venues_by_pk":{"id":1}}}"#);
        // A charset parameter on the request is fine; so is the /graphql path.
        let (status, _, body) = send(
            client()
                .post(format!("{}/graphql", base_url(server)))
                .header("content-type", "application/json; charset=utf-8")
                .body(r#"{"query": "{ venues_by_pk(id: 2) { id } }"}"#),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, r#"{"data":{"venues_by_pk":{"id":2}}}"#);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_graphql_response_json() {
    let (status, ct, body) = send(
        post_raw(
            Server::Sqlite,
            "application/json",
            r#"{"query": "{ __typename }"}"#,
        )
        .header("accept", GRAPHQL_RESPONSE),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(ct.starts_with(GRAPHQL_RESPONSE), "{ct}");
    assert_eq!(body, r#"{"data":{"__typename":"query_root"}}"#);
    // Preference order in Accept is respected.
    let (_, ct, _) = send(
        post_raw(
            Server::Sqlite,
            "application/json",
            r#"{"query": "{ __typename }"}"#,
        )
        .header(
            "accept",
            "application/json, application/graphql-response+json",
        ),
    )
    .await;
    assert!(ct.starts_with("application/json"), "{ct}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_with_query_and_variables() {
    for server in BACKENDS {
        let (status, ct, body) = send(client().get(graphql_url(server)).query(&[
            (
                "query",
                "query Q($id: Int!) { venues_by_pk(id: $id) { id } }",
            ),
            ("variables", r#"{"id": 3}"#),
            ("operationName", "Q"),
        ]))
        .await;
        assert_eq!(status, StatusCode::OK, "{server:?}: {body}");
        assert!(ct.starts_with("application/json"), "{ct}");
        assert_eq!(body, r#"{"data":{"venues_by_pk":{"id":3}}}"#);
        // Without variables.
        let (status, _, body) = send(
            client()
                .get(graphql_url(server))
                .query(&[("query", "{ venues(limit: 1) { id } }")]),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, r#"{"data":{"venues":[{"id":1}]}}"#);
    }
    // No query at all: a client error.
    let (status, _, body) = send(client().get(graphql_url(Server::Sqlite))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&parse(&body)), "parse-failed");
    // Variables that are not JSON.
    let (status, _, body) = send(
        client()
            .get(graphql_url(Server::Sqlite))
            .query(&[("query", "{ __typename }"), ("variables", "{nope")]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_over_the_limit_is_413() {
    let small = json!({"query": "{ venues_by_pk(id: 1) { id } }"}).to_string();
    let (status, _, body) = send(post_raw(Server::SmallBody, "application/json", small)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let padding = " ".repeat(2000);
    let large =
        json!({"query": format!("{{ venues_by_pk(id: 1) {{ id }} }}{padding}")}).to_string();
    assert!(large.len() > 1024);
    let (status, _, body) = send(post_raw(Server::SmallBody, "application/json", large)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(error_code(&parse(&body)), "request-too-large");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_content_type_is_415() {
    let body = r#"{"query": "{ __typename }"}"#;
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/graphql",
    ] {
        let (status, _, raw) = send(post_raw(Server::Sqlite, content_type, body)).await;
        assert_eq!(
            status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type}: {raw}"
        );
        assert_eq!(error_code(&parse(&raw)), "unsupported-media-type");
    }
    // No content type at all.
    let (status, _, _) = send(client().post(graphql_url(Server::Sqlite)).body(body)).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz() {
    for server in BACKENDS {
        let (status, _, _) = send(client().get(format!("{}/healthz", base_url(server)))).await;
        assert_eq!(status, StatusCode::OK, "{server:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_methods_paths_and_bodies() {
    let url = graphql_url(Server::Sqlite);
    // Methods other than GET and POST.
    let (status, _, _) = send(
        client()
            .put(&url)
            .header("content-type", "application/json")
            .body("{}"),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, _, _) = send(client().delete(&url)).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    // Unknown path.
    let (status, _, _) = send(client().get(format!("{}/v1/nope", base_url(Server::Sqlite)))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Empty, non-UTF-8 and `null` bodies.
    for (body, code) in [
        (Vec::new(), "invalid-json"),
        (vec![0xff, 0xfe, b'{'], "invalid-json"),
        (b"null".to_vec(), "parse-failed"),
        (b"\"{ __typename }\"".to_vec(), "parse-failed"),
    ] {
        let (status, ct, raw) =
            send(post_raw(Server::Sqlite, "application/json", body.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {raw}");
        assert!(ct.starts_with("application/json"), "{ct}");
        assert_eq!(error_code(&parse(&raw)), code, "{body:?}: {raw}");
    }
    // Wrong types for operationName and extensions.
    for body in [
        json!({"query": "{ __typename }", "operationName": 5}),
        json!({"query": "{ __typename }", "extensions": "x"}),
    ] {
        let (status, _, raw) = send(post_raw(
            Server::Sqlite,
            "application/json",
            body.to_string(),
        ))
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {raw}");
    }
    // Null operationName, variables and extensions are allowed.
    let (status, _, raw) = send(post_raw(
        Server::Sqlite,
        "application/json",
        json!({"query": "{ __typename }", "operationName": null, "variables": null, "extensions": null}).to_string(),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    assert_eq!(raw, r#"{"data":{"__typename":"query_root"}}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_get_their_own_answers() {
    let all = venues();
    let query = "query ($id: Int!, $w: venues_bool_exp) { venues_by_pk(id: $id) { id name } venues(where: $w, limit: 3) { id } }";
    let mut tasks = Vec::new();
    for i in 0..64_i64 {
        let server = if i % 2 == 0 {
            Server::Sqlite
        } else {
            Server::Postgres
        };
        let id = i * 3 % 200 + 1;
        tasks.push(tokio::spawn(async move {
            let vars = json!({"id": id, "w": {"id": {"_gt": id}}});
            let (status, v, raw) = post(server, query, vars).await;
            (id, status, v, raw)
        }));
    }
    for task in tasks {
        let (id, status, v, raw) = task.await.expect("task");
        assert_eq!(status, 200, "{raw}");
        let next: Vec<i64> = ((id + 1)..=(id + 3))
            .filter(|&n| n <= ROWS as i64)
            .collect();
        assert_eq!(
            v,
            json!({"data": {
                "venues_by_pk": {"id": id, "name": all[(id - 1) as usize].name},
                "venues": ids_json(next)
            }}),
            "id {id}"
        );
    }
}

/// Hasura's older `/v1alpha1/graphql`: the same answers, but an error keeps its
/// own status (400 here) where `/v1/graphql` answers 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1alpha1_answers_errors_with_their_status() {
    for server in BACKENDS {
        let alpha = format!("{}/v1alpha1/graphql", base_url(server));
        let ok = r#"{"query": "{ venues_by_pk(id: 1) { id } }"}"#;
        let bad = r#"{"query": "{ venues_by_pk(id: 1) { no_such_field } }"}"#;
        let post = |url: String, body: &'static str| {
            client()
                .post(url)
                .header("content-type", "application/json")
                .body(body)
        };
        let (status, _, body) = send(post(alpha.clone(), ok)).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::OK, r#"{"data":{"venues_by_pk":{"id":1}}}"#)
        );
        let (alpha_status, _, alpha_body) = send(post(alpha.clone(), bad)).await;
        let (v1_status, _, v1_body) = send(post(graphql_url(server), bad)).await;
        assert_eq!(
            (alpha_status, v1_status),
            (StatusCode::BAD_REQUEST, StatusCode::OK),
            "{server:?}"
        );
        assert_eq!(alpha_body, v1_body);
        assert_eq!(
            error_code(&parse(&alpha_body)),
            "validation-failed",
            "{alpha_body}"
        );
    }
}
