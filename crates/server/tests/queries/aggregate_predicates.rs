//! Aggregate predicates in `where` (Hasura's `<rel>_aggregate: {count | bool_and
//! | bool_or: {arguments, distinct, filter, predicate}}`): on both backends, each
//! answer checked against the same condition in plain SQL, and in a live query
//! that a write moves.

use crate::client;
use crate::common::*;
use serde_json::{json, Value};

/// Ann has three articles, one published; Bob one, published.
const AUTHORS: &str = "CREATE TABLE authors (id int PRIMARY KEY, name text NOT NULL);
          CREATE TABLE articles (id int PRIMARY KEY, author_id int NOT NULL REFERENCES authors,
                                 published boolean NOT NULL);
          INSERT INTO authors VALUES (1, 'ann'), (2, 'bob');
          INSERT INTO articles VALUES (1, 1, true), (2, 1, false), (3, 1, false), (4, 2, true);";

/// A reader sees authors with two articles or more (counted by the rule, which
/// is the operator's) and only published articles.
const AUTHORS_METADATA: &str = r#"
- table: {schema: public, name: authors}
  array_relationships:
    - {name: articles, using: {foreign_key_constraint_on: {column: author_id, table: {schema: public, name: articles}}}}
  select_permissions:
    - role: reader
      permission:
        columns: [id, name]
        filter: {articles_aggregate: {count: {predicate: {_gte: 2}}}}
- table: {schema: public, name: articles}
  select_permissions:
    - role: reader
      permission:
        columns: [id, published]
        filter: {published: {_eq: true}}
        allow_aggregations: true
"#;

/// The category ids `condition` (SQL over `c`, a category) selects, on PostgreSQL.
fn categories_by_sql(condition: &str) -> Value {
    let sql = format!(
        "SELECT coalesce(json_agg(c.id ORDER BY c.id), '[]') FROM categories c WHERE {condition}"
    );
    serde_json::from_str(grafton_testkit::query_one(&postgres_url(), &sql).trim()).expect("ids")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_predicates_match_their_sql() {
    let gadgets =
        |extra: &str| format!("(SELECT {extra} FROM gadgets g WHERE g.category_id = c.id");
    let cases = [
        (
            "{gadgets_aggregate: {count: {predicate: {_gte: 2}}}}",
            format!("{}) >= 2", gadgets("count(*)")),
        ),
        (
            "{gadgets_aggregate: {count: {predicate: {_eq: 1}, filter: {active: {_eq: true}}}}}",
            format!("{} AND g.active) = 1", gadgets("count(*)")),
        ),
        (
            "{gadgets_aggregate: {count: {arguments: [qty], distinct: true, predicate: {_eq: 1}}}}",
            format!("{}) = 1", gadgets("count(DISTINCT g.qty)")),
        ),
        (
            "{gadgets_aggregate: {count: {arguments: [rating], predicate: {_in: [1, 2]}}}}",
            format!("{}) IN (1, 2)", gadgets("count(g.rating)")),
        ),
        (
            "{gadgets_aggregate: {bool_and: {arguments: active, predicate: {_eq: false}}}}",
            format!("{}) = false", gadgets("bool_and(g.active)")),
        ),
        (
            "{gadgets_aggregate: {bool_or: {arguments: active, predicate: {_eq: true}}}}",
            format!("{}) = true", gadgets("bool_or(g.active)")),
        ),
        (
            // A bool_and of no rows is NULL: the predicate is false, not NULL, so
            // under `_not` the categories without gadgets are kept (Hasura's).
            "{_not: {gadgets_aggregate: {bool_and: {arguments: active, predicate: {_eq: true}}}}}",
            format!("NOT COALESCE({}) = true, false)", gadgets("bool_and(g.active)")),
        ),
        (
            "{gadgets_aggregate: {count: {predicate: {_gte: 1, _lte: 1}}}}",
            format!("{}) = 1", gadgets("count(*)")),
        ),
        (
            "{_not: {gadgets_aggregate: {count: {predicate: {_gt: 0}}}}}",
            format!("NOT {}) > 0", gadgets("count(*)")),
        ),
        (
            // Through the children's relationship: a category whose subcategories
            // hold a gadget that is not active.
            "{categories: {gadgets_aggregate: {count: {predicate: {_gt: 0}, filter: {active: {_eq: false}}}}}}",
            "EXISTS (SELECT 1 FROM categories k WHERE k.parent_id = c.id AND (SELECT count(*) FROM gadgets g WHERE g.category_id = k.id AND NOT g.active) > 0)".to_owned(),
        ),
    ];
    for (where_, sql) in cases {
        let want = categories_by_sql(&sql);
        let query = format!("{{ categories(where: {where_}, order_by: {{id: asc}}) {{ id }} }}");
        let data = data(&query, Value::Null).await;
        let got: Vec<Value> = (data["categories"].as_array().into_iter().flatten())
            .map(|c| c["id"].clone())
            .collect();
        assert_eq!(Value::Array(got), want, "{where_}");
        assert!(
            want.as_array()
                .is_some_and(|w| !w.is_empty() && w.len() < 5),
            "{where_} should select some categories, not all: {want}"
        );
    }

    // The predicate's value from a variable; a whole aggregate from one.
    let data = data(
        "query ($n: Int!, $w: categories_bool_exp) { a: categories(where: {gadgets_aggregate: {count: {predicate: {_gte: $n}}}}) { id } b: categories(where: $w) { id } }",
        json!({"n": 2, "w": {"gadgets_aggregate": {"count": {"predicate": {"_eq": 2}}}}}),
    )
    .await;
    assert_eq!(data, json!({"a": [{"id": 3}], "b": [{"id": 3}]}));

    // bool_and takes only boolean columns.
    let v = both(
        "{ categories(where: {gadgets_aggregate: {bool_and: {arguments: qty, predicate: {_eq: true}}}}) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

/// A live query with an aggregate predicate answers again when a write changes
/// the count, and a role's predicate counts only the rows its rule lets it read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_predicates_in_live_queries_and_rules() {
    let (_, server) =
        crate::fresh_server::serve("aggregate_predicates", AUTHORS, AUTHORS_METADATA).await;

    // The rule counts every article (a rule is the operator's, not a read): ann
    // has three. The reader's own predicate counts only published ones.
    let reader = json!({"headers": {
        "x-hasura-admin-secret": crate::ADMIN_SECRET,
        "x-hasura-role": "reader",
    }});
    let mut ws = client::Client::connect(&server, client::TRANSPORT_WS, reader).await;
    ws.start(
        "all",
        "subscription { authors(order_by: {id: asc}) { id } }",
        Value::Null,
    )
    .await;
    ws.start(
        "two",
        "subscription { authors(where: {articles_aggregate: {count: {predicate: {_gte: 2}}}}) { id } }",
        Value::Null,
    )
    .await;
    let first = answers(&mut ws, 2).await;
    assert_eq!(first["all"], json!({"data": {"authors": [{"id": 1}]}}));
    assert_eq!(first["two"], json!({"data": {"authors": []}}));

    // Publishing a second article of ann's moves the reader's count to two.
    let response: Value = reqwest::Client::new()
        .post(server.url())
        .header("x-hasura-admin-secret", crate::ADMIN_SECRET)
        .json(&json!({"query": "mutation { update_articles_by_pk(pk_columns: {id: 2}, _set: {published: true}) { id } }"}))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    assert_eq!(
        response["data"]["update_articles_by_pk"]["id"], 2,
        "{response}"
    );
    // Only the answer that changed is sent again.
    let moved = answers(&mut ws, 1).await;
    assert_eq!(
        moved["two"],
        json!({"data": {"authors": [{"id": 1}]}}),
        "{moved:?}"
    );
    ws.close().await;
    server.stop().await;
}

/// The next `n` results, by subscription id.
async fn answers(ws: &mut client::Client, n: usize) -> std::collections::HashMap<String, Value> {
    let mut out = std::collections::HashMap::new();
    for _ in 0..n {
        match ws.next(std::time::Duration::from_secs(5)).await {
            client::Event::Message(m) if m["type"] == "next" => {
                out.insert(
                    m["id"].as_str().unwrap_or_default().to_owned(),
                    m["payload"].clone(),
                );
            }
            other => panic!("expected a result, got {other:?}"),
        }
    }
    out
}
