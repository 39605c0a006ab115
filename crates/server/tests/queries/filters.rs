//! `where`: every comparison operator, `_and`/`_or`/`_not`, relationship filters,
//! regex operators.

use crate::common::*;
use serde_json::{json, Value};

/// SQL `LIKE` over ASCII: `%` any run, `_` one character.
fn like(text: &str, pattern: &str, case_insensitive: bool) -> bool {
    fn go(t: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('%', rest)) => (0..=t.len()).any(|i| go(&t[i..], rest)),
            Some(('_', rest)) => !t.is_empty() && go(&t[1..], rest),
            Some((c, rest)) => t.first() == Some(c) && go(&t[1..], rest),
        }
    }
    let (t, p) = if case_insensitive {
        (text.to_lowercase(), pattern.to_lowercase())
    } else {
        (text.to_owned(), pattern.to_owned())
    };
    go(
        &t.chars().collect::<Vec<_>>(),
        &p.chars().collect::<Vec<_>>(),
    )
}

/// Runs `venues(where: <where_>, order_by: {id: asc}) { id }` on both backends
/// and checks it returns exactly the venues `keep` selects.
async fn check_venues(where_: &str, keep: impl Fn(&Venue) -> bool) -> Vec<i64> {
    let expected: Vec<i64> = venues().iter().filter(|v| keep(v)).map(|v| v.id).collect();
    let query = format!("{{ venues(where: {where_}, order_by: {{id: asc}}) {{ id }} }}");
    let data = data(&query, Value::Null).await;
    assert_eq!(
        data,
        json!({ "venues": ids_json(expected.clone()) }),
        "where: {where_}"
    );
    expected
}

fn non_trivial(ids: &[i64], what: &str) {
    assert!(
        !ids.is_empty() && ids.len() < ROWS as usize,
        "{what}: the fixture should make this selective, got {} rows",
        ids.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eq_on_text_and_int() {
    let ids = check_venues(r#"{prefecture: {_eq: "Tokyo"}}"#, |v| {
        v.prefecture == "Tokyo"
    })
    .await;
    non_trivial(&ids, "_eq");
    let ids = check_venues("{id: {_eq: 42}}", |v| v.id == 42).await;
    assert_eq!(ids, [42]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neq_excludes_nulls() {
    // `street2 <> 'Annex 5'` is unknown for NULL street2: those rows are not returned.
    let ids = check_venues(r#"{street2: {_neq: "Annex 5"}}"#, |v| {
        v.street2.as_deref().is_some_and(|s| s != "Annex 5")
    })
    .await;
    non_trivial(&ids, "_neq");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gt_gte_lt_lte_on_int() {
    let ids = check_venues("{id: {_gt: 195}}", |v| v.id > 195).await;
    assert_eq!(ids, [196, 197, 198, 199, 200]);
    let ids = check_venues("{id: {_gte: 198}}", |v| v.id >= 198).await;
    assert_eq!(ids, [198, 199, 200]);
    let ids = check_venues("{id: {_lt: 3}}", |v| v.id < 3).await;
    assert_eq!(ids, [1, 2]);
    let ids = check_venues("{id: {_lte: 3}}", |v| v.id <= 3).await;
    assert_eq!(ids, [1, 2, 3]);
    // Several operators on one column are ANDed.
    let ids = check_venues("{id: {_gt: 10, _lte: 13}}", |v| v.id > 10 && v.id <= 13).await;
    assert_eq!(ids, [11, 12, 13]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gt_lt_on_text_compare_bytewise() {
    let ids = check_venues(r#"{postal_code: {_gte: "500", _lt: "600"}}"#, |v| {
        v.postal_code.as_str() >= "500" && v.postal_code.as_str() < "600"
    })
    .await;
    non_trivial(&ids, "text range");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_and_nin() {
    let ids = check_venues("{id: {_in: [7, 3, 99999]}}", |v| [7, 3].contains(&v.id)).await;
    assert_eq!(ids, [3, 7]);
    let ids = check_venues(r#"{prefecture: {_in: ["Tokyo", "Osaka"]}}"#, |v| {
        v.prefecture == "Tokyo" || v.prefecture == "Osaka"
    })
    .await;
    non_trivial(&ids, "_in text");
    let ids = check_venues("{id: {_nin: [1, 2, 3]}, _and: {id: {_lt: 6}}}", |v| {
        v.id > 3 && v.id < 6
    })
    .await;
    assert_eq!(ids, [4, 5]);
    // Empty lists: `_in: []` matches nothing, `_nin: []` everything.
    let ids = check_venues("{id: {_in: []}}", |_| false).await;
    assert!(ids.is_empty());
    let ids = check_venues("{id: {_nin: []}}", |_| true).await;
    assert_eq!(ids.len(), ROWS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nin_excludes_nulls() {
    let ids = check_venues(r#"{street2: {_nin: ["Annex 1", "Annex 2"]}}"#, |v| {
        v.street2
            .as_deref()
            .is_some_and(|s| s != "Annex 1" && s != "Annex 2")
    })
    .await;
    non_trivial(&ids, "_nin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn is_null_true_and_false() {
    let nulls = check_venues("{building: {_is_null: true}}", |v| v.building.is_none()).await;
    non_trivial(&nulls, "_is_null: true");
    let not_nulls = check_venues("{building: {_is_null: false}}", |v| v.building.is_some()).await;
    non_trivial(&not_nulls, "_is_null: false");
    assert_eq!(nulls.len() + not_nulls.len(), ROWS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn like_is_case_sensitive() {
    let ids = check_venues(r#"{name: {_like: "%Hall%"}}"#, |v| {
        like(&v.name, "%Hall%", false)
    })
    .await;
    non_trivial(&ids, "_like %Hall%");
    // Same pattern in lower case: LIKE is case-sensitive (as in PostgreSQL).
    let ids = check_venues(r#"{name: {_like: "%hall%"}}"#, |v| {
        like(&v.name, "%hall%", false)
    })
    .await;
    assert!(ids.is_empty(), "_like must be case-sensitive: {ids:?}");
    // `_` matches exactly one character.
    let ids = check_venues(r#"{name: {_like: "% _"}}"#, |v| like(&v.name, "% _", false)).await;
    assert!(ids.iter().all(|&id| id < 10), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nlike() {
    let ids = check_venues(r#"{name: {_nlike: "Sakura%"}}"#, |v| {
        !like(&v.name, "Sakura%", false)
    })
    .await;
    non_trivial(&ids, "_nlike");
    // Case-sensitive too: a lower-case prefix excludes nothing.
    let ids = check_venues(r#"{name: {_nlike: "sakura%"}}"#, |_| true).await;
    assert_eq!(ids.len(), ROWS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ilike_and_nilike() {
    let ids = check_venues(r#"{name: {_ilike: "%hALL%"}}"#, |v| {
        like(&v.name, "%hall%", true)
    })
    .await;
    non_trivial(&ids, "_ilike");
    let ids = check_venues(r#"{name: {_nilike: "SAKURA%"}}"#, |v| {
        !like(&v.name, "sakura%", true)
    })
    .await;
    non_trivial(&ids, "_nilike");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn and_or_not_nesting() {
    let ids = check_venues(
        "{_or: [{id: {_lt: 3}}, {_and: [{id: {_gt: 195}}, {_not: {id: {_eq: 198}}}]}]}",
        |v| v.id < 3 || (v.id > 195 && v.id != 198),
    )
    .await;
    assert_eq!(ids, [1, 2, 196, 197, 199, 200]);
    // _not over _or, combined with a sibling column condition (implicit AND).
    let ids = check_venues(
        r#"{id: {_lte: 20}, _not: {_or: [{prefecture: {_eq: "Tokyo"}}, {building: {_is_null: true}}]}}"#,
        |v| v.id <= 20 && !(v.prefecture == "Tokyo" || v.building.is_none()),
    )
    .await;
    non_trivial(&ids, "_not _or");
    // A single object where a list is expected is coerced to a one-element list.
    let ids = check_venues("{_and: {id: {_lt: 4}}}", |v| v.id < 4).await;
    assert_eq!(ids, [1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_expressions_are_true() {
    // `{}`, `_and: []` and an empty comparison are all "true"; `_not: {}` is false.
    for where_ in ["{}", "{_and: []}", "{id: {}}"] {
        let ids = check_venues(where_, |_| true).await;
        assert_eq!(ids.len(), ROWS as usize, "{where_}");
    }
    let ids = check_venues("{_not: {}}", |_| false).await;
    assert!(ids.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_relationship_filter() {
    let venue_prefecture: std::collections::HashMap<i64, String> =
        venues().into_iter().map(|v| (v.id, v.prefecture)).collect();
    let expected: Vec<i64> = meetups()
        .iter()
        .filter(|m| venue_prefecture[&m.venue_id] == "Tokyo")
        .map(|m| m.id)
        .collect();
    assert!(!expected.is_empty());
    let data = data(
        r#"{ meetups(where: {venue: {prefecture: {_eq: "Tokyo"}}}, order_by: {id: asc}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(data, json!({ "meetups": ids_json(expected) }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_relationship_filter_is_exists() {
    let meetups = meetups();
    let has = |venue: i64, pattern: &str| {
        meetups
            .iter()
            .any(|m| m.venue_id == venue && like(&m.title, pattern, false))
    };
    let ids = check_venues(r#"{meetups: {title: {_like: "%Rust%"}}}"#, |v| {
        has(v.id, "%Rust%")
    })
    .await;
    non_trivial(&ids, "array filter");
    // No duplicates even when several meetups match: the ids are strictly ascending.
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // `_not` over an empty relationship filter: venues with no meetups at all.
    let ids = check_venues("{_not: {meetups: {}}}", |v| !has(v.id, "%")).await;
    non_trivial(&ids, "venues without meetups");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_relationship_filter_two_levels() {
    // meetups whose venue has at least one meetup titled like "%GraphQL%".
    let meetups = meetups();
    let graphql_venues: std::collections::HashSet<i64> = meetups
        .iter()
        .filter(|m| like(&m.title, "%GraphQL%", false))
        .map(|m| m.venue_id)
        .collect();
    let expected: Vec<i64> = meetups
        .iter()
        .filter(|m| graphql_venues.contains(&m.venue_id))
        .map(|m| m.id)
        .collect();
    let data = data(
        r#"{ meetups(where: {venue: {meetups: {title: {_like: "%GraphQL%"}}}}, order_by: {id: asc}) { id } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(data, json!({ "meetups": ids_json(expected) }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn booleans_and_floats_in_filters() {
    let data = data(
        r#"{
          active: gadgets(where: {active: {_eq: true}}) { id }
          inactive: gadgets(where: {active: {_neq: true}}) { id }
          heavy: gadgets(where: {weight: {_gt: 0.5}}) { id weight }
          exact: gadgets(where: {weight: {_eq: 2.25}}) { id }
          in_floats: gadgets(where: {rating: {_in: [0.5, 3]}}) { id rating }
          unrated: gadgets(where: {rating: {_is_null: true}}) { id }
          noted: gadgets(where: {note: {_is_null: false}}) { id note }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        data,
        json!({
            "active": [{"id": 1}, {"id": 3}, {"id": 5}],
            "inactive": [{"id": 2}, {"id": 4}],
            "heavy": [{"id": 1, "weight": 3}, {"id": 3, "weight": 2.25}, {"id": 4, "weight": 3}],
            "exact": [{"id": 3}],
            "in_floats": [{"id": 3, "rating": 0.5}, {"id": 4, "rating": 3}],
            "unrated": [{"id": 2}, {"id": 5}],
            "noted": [
                {"id": 2, "note": "round"},
                {"id": 3, "note": "sharp; don't \"touch\""},
                {"id": 5, "note": "wooden"}
            ]
        })
    );
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
