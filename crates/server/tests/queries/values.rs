//! Values as they travel: booleans and floats, text escaping, timestamps on both
//! backends, quotes and injection attempts, huge literals.

use crate::common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn booleans_and_floats_render_identically() {
    let d = data("{ gadgets { id active weight rating } }", Value::Null).await;
    assert_eq!(
        d,
        json!({"gadgets": [
            {"id": 1, "active": true, "weight": 3, "rating": 2.25},
            {"id": 2, "active": false, "weight": 0.5, "rating": null},
            {"id": 3, "active": true, "weight": 2.25, "rating": 0.5},
            {"id": 4, "active": false, "weight": 3, "rating": 3},
            {"id": 5, "active": true, "weight": 0.5, "rating": null}
        ]})
    );
    // The raw text, not only the parsed value, is `true`/`false` and `3`/`0.5`.
    let (_, _, raw) = post(
        Server::Sqlite,
        "{ gadgets_by_pk(id: 4) { active weight } }",
        Value::Null,
    )
    .await;
    assert_eq!(
        raw,
        r#"{"data":{"gadgets_by_pk":{"active":false,"weight":3}}}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_escaping_round_trips() {
    let d = data("{ texts { id body } }", Value::Null).await;
    let expected: Vec<Value> = TEXTS
        .iter()
        .enumerate()
        .map(|(i, body)| json!({"id": i + 1, "body": body}))
        .collect();
    assert_eq!(d, json!({ "texts": expected }));
    // Each value, sent back as a variable, finds exactly its row.
    for (i, body) in TEXTS.iter().enumerate() {
        let d = data(
            "query ($b: String!) { texts(where: {body: {_eq: $b}}) { id } }",
            json!({ "b": body }),
        )
        .await;
        assert_eq!(d, json!({"texts": [{"id": i + 1}]}), "{body:?}");
    }
    // Literal GraphQL escapes, including \u escapes.
    let d = data(
        r#"{ a: texts(where: {body: {_eq: "line1\nline2"}}) { id }
             b: texts(where: {body: {_eq: "caf\u00e9 \u65e5\u672c\u8a9e \ud83c\udf89"}}) { id }
             c: texts(where: {body: {_eq: "quote \" backslash \\ slash \/"}}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"a": [{"id": 2}], "b": [{"id": 4}], "c": [{"id": 5}]})
    );
    // LIKE metacharacters in data are data; in patterns, `\` escapes them.
    let d = data(
        r#"{ pct: texts(where: {body: {_like: "%100\\%%"}}) { id }
             under: texts(where: {body: {_like: "%\\_true\\_"}}) { id }
             any: texts_aggregate(where: {body: {_like: "%"}}) { aggregate { count } } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"pct": [{"id": 9}], "under": [{"id": 9}], "any": {"aggregate": {"count": TEXTS.len()}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_filter_and_order() {
    let all = meetups();
    let mut expected: Vec<&Meetup> = all
        .iter()
        .filter(|m| {
            m.start_at.as_str() >= "2025-06-01T00:00:00" && m.start_at.as_str() < "2025-07-01"
        })
        .collect();
    expected.sort_by(|a, b| b.start_at.cmp(&a.start_at).then(a.id.cmp(&b.id)));
    let expected: Vec<Value> = expected
        .iter()
        .map(|m| json!({"id": m.id, "start_at": m.start_at}))
        .collect();
    assert!(!expected.is_empty());
    let d = data(
        r#"{ meetups(where: {start_at: {_gte: "2025-06-01T00:00:00", _lt: "2025-07-01T00:00:00"}},
                     order_by: [{start_at: desc}, {id: asc}]) { id start_at } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "meetups": expected }));
    // Exact match on a stored value, and min/max.
    let m = &all[0];
    let d = data(
        "query ($t: timestamp!) { meetups(where: {start_at: {_eq: $t}, id: {_eq: 1}}) { id } \
           meetups_aggregate { aggregate { min { start_at } max { end_at } } } }",
        json!({ "t": m.start_at }),
    )
    .await;
    let min = all.iter().map(|m| m.start_at.clone()).min();
    let max = all.iter().map(|m| m.end_at.clone()).max();
    assert_eq!(
        d,
        json!({"meetups": [{"id": 1}], "meetups_aggregate": {"aggregate": {"min": {"start_at": min}, "max": {"end_at": max}}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_compare_in_the_stored_spelling_on_both_backends() {
    // SQLite stores timestamps as text, so it compares them as text: the spelling
    // the data uses ("YYYY-MM-DDTHH:MM:SS" in the demo) matches on both backends.
    // Other spellings (a space for `T`) only match on PostgreSQL, which parses
    // them; the README documents this.
    let m = &meetups()[0];
    let d = data(
        "query ($t: timestamp!) { meetups(where: {start_at: {_eq: $t}, id: {_eq: 1}}) { id } }",
        json!({ "t": m.start_at }),
    )
    .await;
    assert_eq!(d, json!({"meetups": [{"id": 1}]}));
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
