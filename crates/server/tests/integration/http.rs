//! GraphQL over HTTP: status codes, media types, error codes, limits, and
//! hostile input.

use crate::common::*;
use reqwest::StatusCode;
use serde_json::{json, Value};

const GRAPHQL_RESPONSE: &str = "application/graphql-response+json";

/// Sends a request and returns status, content type and body text.
async fn send(request: reqwest::RequestBuilder) -> (StatusCode, String, String) {
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

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

fn post_raw(
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
async fn malformed_json_is_400_invalid_json() {
    for server in BACKENDS {
        let (status, ct, body) = send(post_raw(server, "application/json", r#"{"query": "#)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(ct.starts_with("application/json"), "{ct}");
        let v = parse(&body);
        assert_eq!(error_code(&v), "invalid-json", "{v}");
        assert!(v.get("data").is_none(), "{v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_query_is_400_parse_failed() {
    for body in [
        json!({}),
        json!({"variables": {}}),
        json!({"query": 42}),
        json!({"query": "{ __typename }", "variables": [1]}),
        json!(["not", "an", "object"]),
    ] {
        let (status, _, raw) = send(post_raw(
            Server::Sqlite,
            "application/json",
            body.to_string(),
        ))
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {raw}");
        assert_eq!(error_code(&parse(&raw)), "parse-failed", "{body}: {raw}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syntax_error_is_400_parse_failed() {
    for server in BACKENDS {
        let (status, v, raw) = post(server, "{ venues { id ", Value::Null).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{raw}");
        assert_eq!(error_code(&v), "parse-failed", "{raw}");
        assert!(v["errors"][0]["message"].is_string());
        assert!(v.get("data").is_none());
        let (status, v, _) = post(server, "", Value::Null).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(error_code(&v), "parse-failed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_field_is_validation_failed() {
    let v = both("{ venues { id no_such_column } }", Value::Null).await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
    assert!(v.get("data").is_none(), "{v}");
    let v = both("{ no_such_table { id } }", Value::Null).await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
    // With the GraphQL response media type, request errors are 4xx.
    let (status, ct, body) = send(
        post_raw(
            Server::Postgres,
            "application/json",
            r#"{"query": "{ venues { id no_such_column } }"}"#,
        )
        .header("accept", GRAPHQL_RESPONSE),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(ct.starts_with(GRAPHQL_RESPONSE), "{ct}");
    assert_eq!(error_code(&parse(&body)), "validation-failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variable_errors_are_validation_failed() {
    let query = "query ($id: Int!) { venues_by_pk(id: $id) { id } }";
    for vars in [
        json!({"id": "abc"}),
        json!({"id": 1.5}),
        json!({}),
        json!({"id": null}),
    ] {
        let v = both(query, vars.clone()).await;
        assert_eq!(error_code(&v), "validation-failed", "{vars}: {v}");
    }
    // An input object with an unknown field.
    let v = both(
        "query ($w: venues_bool_exp) { venues(where: $w) { id } }",
        json!({"w": {"nope": {"_eq": 1}}}),
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
    // An undeclared variable in the document.
    let v = both("{ venues_by_pk(id: $id) { id } }", json!({"id": 1})).await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_operation_name_is_validation_failed() {
    let v = both_body(json!({
        "query": "query A { __typename } query B { __typename }",
        "operationName": "C"
    }))
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
    let v = both_body(json!({"query": "{ __typename }", "operationName": "Named"})).await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
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
async fn get_with_a_mutation_or_subscription_document_is_405() {
    // Valid documents that are not queries: GET only runs queries.
    for document in [
        "mutation { insert_venues(objects: []) { affected_rows } }",
        "mutation { __typename }",
        "subscription { venues { id } }",
    ] {
        let (status, ct, body) = send(
            client()
                .get(graphql_url(Server::Sqlite))
                .query(&[("query", document)]),
        )
        .await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{document}: {body}");
        assert!(ct.starts_with("application/json"), "{ct}");
        let v = parse(&body);
        assert_eq!(error_code(&v), "method-not-allowed", "{document}: {v}");
    }
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
async fn postgres_data_exceptions_are_reported_not_panics() {
    // An invalid regular expression: SQLSTATE 2201B.
    let (status, v, raw) = post(
        Server::Postgres,
        r#"{ venues(where: {name: {_regex: "("}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    assert_eq!(error_code(&v), "data-exception", "{raw}");
    assert_eq!(v["data"], Value::Null, "{raw}");
    // A LIKE pattern ending in the escape character, reached while matching a
    // row: SQLSTATE 22025 on PostgreSQL.
    let first = &venues()[0].name;
    let (status, v, raw) = post(
        Server::Postgres,
        "query ($p: String!) { venues(where: {name: {_like: $p}}) { id } }",
        json!({ "p": format!("{first}\\") }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    assert_eq!(error_code(&v), "data-exception", "{raw}");
    // When the matcher never reaches the escape character, it is just no match.
    let v = both(
        r#"{ venues(where: {name: {_like: "abc\\"}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(v, json!({"data": {"venues": []}}));
    // The same through a variable.
    let (_, v, raw) = post(
        Server::Postgres,
        "query ($r: String!) { venues(where: {city: {_iregex: $r}}) { id } }",
        json!({"r": "[z-a]"}),
    )
    .await;
    assert_eq!(error_code(&v), "data-exception", "{raw}");
    // The server keeps serving.
    let (status, _, raw) = post(
        Server::Postgres,
        "{ venues_by_pk(id: 1) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(raw, r#"{"data":{"venues_by_pk":{"id":1}}}"#);
    // Regex operators are Postgres-only: on SQLite they do not exist.
    let (_, v, _) = post(
        Server::Sqlite,
        r#"{ venues(where: {name: {_regex: "("}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regex_operators_on_postgres() {
    let all = venues();
    let (_, v, raw) = post(
        Server::Postgres,
        r#"{
          regex: venues(where: {name: {_regex: "^Sakura (Hall|Hub) 1[0-9]$"}}) { id }
          iregex: venues_aggregate(where: {name: {_iregex: "^sakura"}}) { aggregate { count } }
          nregex: venues_aggregate(where: {name: {_nregex: "^Sakura"}}) { aggregate { count } }
          similar: venues_aggregate(where: {name: {_similar: "Sakura%"}}) { aggregate { count } }
        }"#,
        Value::Null,
    )
    .await;
    assert!(v.get("errors").is_none(), "{raw}");
    let expected: Vec<i64> = all
        .iter()
        .filter(|v| {
            (10..20).contains(&v.id)
                && (v.name == format!("Sakura Hall {}", v.id)
                    || v.name == format!("Sakura Hub {}", v.id))
        })
        .map(|v| v.id)
        .collect();
    let sakura = all.iter().filter(|v| v.name.starts_with("Sakura")).count();
    assert_eq!(
        v["data"],
        json!({
            "regex": ids_json(expected),
            "iregex": {"aggregate": {"count": sakura}},
            "nregex": {"aggregate": {"count": all.len() - sakura}},
            "similar": {"aggregate": {"count": sakura}}
        })
    );
}

fn nested_and(depth: usize) -> String {
    let mut s = String::from("{id: {_eq: 1}}");
    for _ in 0..depth {
        s = format!("{{_and: [{s}]}}");
    }
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_and() {
    // As deep as the parser allows is planned and answered (each worker thread
    // has the main thread's stack: WORKER_STACK_BYTES)…
    let query = format!("{{ venues(where: {}) {{ id }} }}", nested_and(248));
    let d = data(&query, Value::Null).await;
    assert_eq!(d, json!({"venues": [{"id": 1}]}));
    // …and deeper is the parser's clear refusal.
    let query = format!("{{ venues(where: {}) {{ id }} }}", nested_and(249));
    let (status, v, _) = post(Server::Sqlite, &query, Value::Null).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(error_code(&v), "parse-failed", "{v}");
    assert!(v.to_string().contains("recursion limit"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_variables_work_up_to_the_json_depth_guard() {
    let nested = |depth: usize| {
        let mut w = json!({"id": {"_eq": 2}});
        for _ in 0..depth {
            w = json!({ "_and": [w] });
        }
        w
    };
    let query = "query ($w: venues_bool_exp) { venues(where: $w) { id } }";
    // 50 levels of `_and` (100 JSON levels) are fine…
    let d = data(query, json!({ "w": nested(50) })).await;
    assert_eq!(d, json!({"venues": [{"id": 2}]}));
    // …while a body nested beyond serde_json's 128-level guard is refused up front
    // with a clear 400, never a stack overflow.
    let (status, v, _) = post(Server::Sqlite, query, json!({ "w": nested(200) })).await;
    assert_eq!(status, 400);
    assert_eq!(error_code(&v), "invalid-json", "{v}");
    assert!(v.to_string().contains("recursion limit"), "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_string_literal() {
    let big = "x".repeat(100 * 1024);
    let query = format!(r#"{{ venues(where: {{name: {{_eq: "{big}"}}}}) {{ id }} }}"#);
    let d = data(&query, Value::Null).await;
    assert_eq!(d, json!({"venues": []}));
    let d = data(
        "query ($s: String!) { venues(where: {name: {_neq: $s}}, limit: 1) { id } }",
        json!({ "s": big }),
    )
    .await;
    assert_eq!(d, json!({"venues": [{"id": 1}]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotes_backslashes_and_injection_attempts_are_plain_values() {
    let hostile = [
        "'; DROP TABLE venues; --",
        "\"; DROP TABLE venues; --",
        "' OR '1'='1",
        "\\",
        "\\'",
        "a'b\"c\\d",
        "%",
        "$1",
        "?1",
        "日本語",
    ];
    for value in hostile {
        // As a literal (GraphQL-escaped) and as a variable.
        let literal = serde_json::to_string(value).expect("escape");
        let query = format!(
            "{{ venues(where: {{_or: [{{name: {{_eq: {literal}}}}}, {{city: {{_in: [{literal}]}}}}]}}) {{ id }} }}"
        );
        let v = both(&query, Value::Null).await;
        assert_eq!(v, json!({"data": {"venues": []}}), "literal {value:?}");
        let v = both(
            "query ($s: String!) { venues(where: {_or: [{name: {_eq: $s}}, {street1: {_eq: $s}}]}) { id } }",
            json!({ "s": value }),
        )
        .await;
        assert_eq!(v, json!({"data": {"venues": []}}), "variable {value:?}");
    }
    // A stored value with quotes round-trips and matches exactly.
    let d = data(
        r#"{ gadgets(where: {note: {_eq: "sharp; don't \"touch\""}}) { id note } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"gadgets": [{"id": 3, "note": "sharp; don't \"touch\""}]})
    );
    // Everything is still there.
    let d = data("{ venues_aggregate { aggregate { count } } }", Value::Null).await;
    assert_eq!(
        d,
        json!({"venues_aggregate": {"aggregate": {"count": ROWS}}})
    );
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
async fn graphql_response_media_type_on_errors() {
    for (body, status, code) in [
        (r#"{"query": "{ venues { "}"#.to_owned(), StatusCode::BAD_REQUEST, "parse-failed"),
        ("{nope".to_owned(), StatusCode::BAD_REQUEST, "invalid-json"),
        (
            json!({"query": "query ($id: Int!) { venues_by_pk(id: $id) { id } }", "variables": {"id": "x"}}).to_string(),
            StatusCode::BAD_REQUEST,
            "validation-failed",
        ),
    ] {
        let (got, ct, raw) = send(
            post_raw(Server::Postgres, "application/json", body.clone()).header("accept", GRAPHQL_RESPONSE),
        )
        .await;
        assert_eq!(got, status, "{body}: {raw}");
        assert!(ct.starts_with(GRAPHQL_RESPONSE), "{ct}");
        assert_eq!(error_code(&parse(&raw)), code, "{raw}");
    }
    // A database error is not a request error: 200 with data null, even here.
    let (status, ct, raw) = send(
        post_raw(
            Server::Postgres,
            "application/json",
            json!({"query": r#"{ venues(where: {name: {_regex: "("}}) { id } }"#}).to_string(),
        )
        .header("accept", GRAPHQL_RESPONSE),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    assert!(ct.starts_with(GRAPHQL_RESPONSE), "{ct}");
    let v = parse(&raw);
    assert_eq!(error_code(&v), "data-exception");
    assert_eq!(v["data"], Value::Null);
}
