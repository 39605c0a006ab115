//! ltree, as Hasura serves it: `ltree` columns with `_ancestor`, `_descendant`,
//! their `_any` forms, `_matches` (lquery), `_matches_any` and
//! `_matches_fulltext` (ltxtquery), in `where` and in a permission rule, each
//! answer checked against the same operator in plain SQL.

use crate::fresh_server::{ids, ids_by_sql, post, serve};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../fixtures/sql/ltree.postgres.sql");

/// A reader sees the subtree under its `x-hasura-subtree`.
const METADATA: &str = r#"
- table: {schema: public, name: tree}
  select_permissions:
    - role: reader
      permission:
        columns: [id, path]
        filter: {path: {_descendant: X-Hasura-Subtree}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ltree_operators_match_their_sql() {
    let (url, server) = serve("ltree", FIXTURE, METADATA).await;
    let endpoint = server.url();

    let cases = [
        (
            "_ancestor",
            json!("Top.Science.Astronomy"),
            "path @> 'Top.Science.Astronomy'",
        ),
        ("_descendant", json!("Top.Science"), "path <@ 'Top.Science'"),
        (
            "_ancestor_any",
            json!(["Top.Hobbies.Amateurs_Astronomy", "Top.Collections.Pictures"]),
            "path @> '{Top.Hobbies.Amateurs_Astronomy,Top.Collections.Pictures}'::ltree[]",
        ),
        (
            "_descendant_any",
            json!(["Top.Hobbies", "Top.Science.Astronomy"]),
            "path <@ '{Top.Hobbies,Top.Science.Astronomy}'::ltree[]",
        ),
        ("_matches", json!("*.Astronomy.*"), "path ~ '*.Astronomy.*'"),
        (
            "_matches_any",
            json!(["*.Hobbies.*", "Top.Collections"]),
            "path ? '{*.Hobbies.*,Top.Collections}'::lquery[]",
        ),
        (
            "_matches_fulltext",
            json!("Astro* & !pictures@"),
            "path @ 'Astro* & !pictures@'",
        ),
        ("_gt", json!("Top.Science"), "path > 'Top.Science'"),
    ];
    for (op, operand, condition) in cases {
        let literal = serde_json::to_string(&operand).expect("json");
        let v = post(
            &endpoint,
            &[],
            &format!(
                "{{ tree(where: {{path: {{{op}: {literal}}}}}, order_by: {{id: asc}}) {{ id }} }}"
            ),
            Value::Null,
        )
        .await;
        let want = ids_by_sql(&url, "tree", condition);
        assert!(want.as_array().is_some_and(|w| !w.is_empty()), "{op}");
        assert_eq!(ids(&v["data"]["tree"]), want, "{op}: {v}");
    }
    let v = post(
        &endpoint,
        &[],
        r#"query ($q: lquery!, $t: ltxtquery!, $paths: [ltree!], $qs: [String!]) {
            a: tree(where: {path: {_matches: $q}}, order_by: {id: asc}) { id }
            b: tree(where: {path: {_matches_fulltext: $t}}, order_by: {id: asc}) { id }
            c: tree(where: {path: {_descendant_any: $paths}}, order_by: {id: asc}) { id }
            d: tree(where: {path: {_matches_any: $qs}}, order_by: {id: asc}) { id }
        }"#,
        json!({"q": "Top.*{1}", "t": "Stars | Galaxies", "paths": ["Top.Hobbies", "Top.Science.Astronomy"],
               "qs": ["*.Hobbies.*", "Top.Collections"]}),
    )
    .await;
    assert_eq!(
        ids(&v["data"]["c"]),
        ids_by_sql(
            &url,
            "tree",
            "path <@ '{Top.Hobbies,Top.Science.Astronomy}'::ltree[]"
        ),
        "{v}"
    );
    assert_eq!(
        ids(&v["data"]["d"]),
        ids_by_sql(
            &url,
            "tree",
            "path ? '{*.Hobbies.*,Top.Collections}'::lquery[]"
        ),
        "{v}"
    );
    assert_eq!(
        ids(&v["data"]["a"]),
        ids_by_sql(&url, "tree", "path ~ 'Top.*{1}'"),
        "{v}"
    );
    assert_eq!(ids(&v["data"]["b"]), json!([11, 12]), "{v}");

    // A malformed path is the database's to refuse.
    let v = post(
        &endpoint,
        &[],
        r#"{ tree(where: {path: {_descendant: "Top..Science"}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert!(v["data"].is_null(), "{v}");
    assert!(
        (v["errors"][0]["message"].as_str()).is_some_and(|m| m.contains("ltree syntax error")),
        "{v}"
    );

    // The rule's subtree comes from the session.
    let v = post(
        &endpoint,
        &[
            ("x-hasura-role", "reader"),
            ("x-hasura-subtree", "Top.Collections"),
        ],
        "{ tree(order_by: {id: asc}) { id path } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        ids(&v["data"]["tree"]),
        ids_by_sql(&url, "tree", "path <@ 'Top.Collections'"),
        "{v}"
    );
    server.stop().await;
}
