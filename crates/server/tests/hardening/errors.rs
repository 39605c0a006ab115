//! No answer quotes SQL. A `where` of ~33,000 literals is past SQLite's limit of
//! bound variables: the client is told the query is too large (`validation-failed`),
//! not handed the statement with every role's permission rules in it.

use crate::{databases, post_as, serve, DOCUMENTS};

const CONFIG: &str = r#"
tables:
  documents:
    permissions:
      user:
        select: {columns: [id, title], filter: {owner: {_eq: X-Hasura-User-Id}}}
      auditor:
        select: {columns: [id, title, secret], filter: {secret: {_like: "s%"}}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_where_is_refused_without_sql() {
    let literals: Vec<String> = (0..33_000)
        .map(|i| format!("{{id: {{_eq: {i}}}}}"))
        .collect();
    let query = format!(
        "{{ documents(where: {{_or: [{}]}}) {{ id }} }}",
        literals.join(",")
    );
    let [sqlite, postgres] = databases("hardening_errors", DOCUMENTS);
    let server = serve(&sqlite, CONFIG).await;
    // The common harness fails the test on any SQL in the errors.
    let body = post_as(&server, Some("user"), "a", &query).await;
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "validation-failed",
        "{body}"
    );
    let text = body.to_string();
    assert!(
        text.len() < 1_000,
        "a short answer, not the statement: {text}"
    );
    assert!(
        !text.contains("X-Hasura") && !text.contains("owner"),
        "{text}"
    );
    // PostgreSQL binds that many values: the same request answers.
    let server = serve(&postgres, CONFIG).await;
    let body = post_as(&server, Some("user"), "a", &query).await;
    assert_eq!(
        body["data"]["documents"].as_array().map(Vec::len),
        Some(2),
        "{body}"
    );
}
