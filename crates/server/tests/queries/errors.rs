//! Errors: invalid JSON, GraphQL that does not parse or validate, wrong variables,
//! methods, and database exceptions, each with its code and status.

use crate::common::*;
use crate::http::{parse, post_raw, send, GRAPHQL_RESPONSE};
use reqwest::StatusCode;
use serde_json::{json, Value};

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
    // row: SQLSTATE 22025 on PostgreSQL, which Hasura answers `bad-request`
    // (its `select_query_invalid_escape_sequence` case).
    let first = &venues()[0].name;
    let (status, v, raw) = post(
        Server::Postgres,
        "query ($p: String!) { venues(where: {name: {_like: $p}}) { id } }",
        json!({ "p": format!("{first}\\") }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{raw}");
    assert_eq!(error_code(&v), "bad-request", "{raw}");
    assert_eq!(v["data"], Value::Null, "{raw}");
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
