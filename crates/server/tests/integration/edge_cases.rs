//! Less travelled paths: text escaping, awkward identifiers, wide selections,
//! deep nesting, statistics on tiny sets, timestamps, argument corner cases.

use crate::common::*;
use serde_json::{json, Value};

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
async fn reserved_words_and_odd_identifiers() {
    let d = data(
        r#"{
          order(order_by: {group: desc}) { group Select two_words }
          order_by_pk(group: 1) { two_words }
          order_aggregate(where: {Select: {_is_null: true}}) { aggregate { count max { group } } }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "order": [
                {"group": 2, "Select": null, "two_words": "it's"},
                {"group": 1, "Select": "a", "two_words": "b"}
            ],
            "order_by_pk": {"two_words": "b"},
            "order_aggregate": {"aggregate": {"count": 1, "max": {"group": 2}}}
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_selections() {
    // More fields than one json_object/json_build_object call takes.
    let n = 130;
    let fields: String = (0..n).map(|i| format!("f{i}: id ")).collect();
    let d = data(
        &format!("{{ venues_by_pk(id: 9) {{ {fields} }} venues(limit: 2) {{ {fields} }} }}"),
        Value::Null,
    )
    .await;
    let object = |id: i64| Value::Object((0..n).map(|i| (format!("f{i}"), json!(id))).collect());
    assert_eq!(
        d,
        json!({"venues_by_pk": object(9), "venues": [object(1), object(2)]})
    );
    // Many root fields.
    let roots: String = (0..n)
        .map(|i| format!("r{i}: venues_by_pk(id: {}) {{ id }} ", i % 50 + 1))
        .collect();
    let d = data(&format!("{{ {roots} }}"), Value::Null).await;
    let expected: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("r{i}"), json!({"id": i % 50 + 1})))
        .collect();
    assert_eq!(d, Value::Object(expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_relationship_chain() {
    // venue → meetups → venue → meetups → … eight levels down.
    let meetups = meetups();
    let venue = meetups[0].venue_id;
    let mut at_venue: Vec<i64> = meetups
        .iter()
        .filter(|m| m.venue_id == venue)
        .map(|m| m.id)
        .collect();
    at_venue.sort();
    let first = at_venue[0];
    let mut selection = String::from("id");
    let mut expected = json!({"id": venue});
    for _ in 0..4 {
        selection =
            format!("id meetups(limit: 1, order_by: {{id: asc}}) {{ id venue {{ {selection} }} }}");
        expected = json!({"id": venue, "meetups": [{"id": first, "venue": expected}]});
    }
    let d = data(
        &format!("{{ venues_by_pk(id: {venue}) {{ {selection} }} }}"),
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "venues_by_pk": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_level_nesting_with_link_table() {
    let links = meetups_members();
    let members = members();
    let d = data(
        "{ venues(where: {id: {_lte: 3}}) { id meetups(order_by: {id: asc}) { id meetups_members(order_by: {member_id: asc}) { member { id email } } } } }",
        Value::Null,
    )
    .await;
    let all_meetups = meetups();
    let expected: Vec<Value> = (1..=3)
        .map(|v| {
            let ms: Vec<Value> = all_meetups
                .iter()
                .filter(|m| m.venue_id == v)
                .map(|m| {
                    let mm: Vec<Value> = links
                        .iter()
                        .filter(|(meetup, _)| *meetup == m.id)
                        .map(|(_, member)| {
                            let e = &members[(*member - 1) as usize].email;
                            json!({"member": {"id": member, "email": e}})
                        })
                        .collect();
                    json!({"id": m.id, "meetups_members": mm})
                })
                .collect();
            json!({"id": v, "meetups": ms})
        })
        .collect();
    assert_eq!(d, json!({ "venues": expected }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_on_one_row_and_population_variants() {
    let d = data(
        r#"{
          one: gadgets_aggregate(where: {id: {_eq: 1}}) {
            aggregate { stddev { qty } stddev_samp { qty } var_samp { qty } variance { qty }
                        stddev_pop { qty } var_pop { qty } avg { qty weight } }
          }
          all: gadgets_aggregate {
            aggregate { var_pop { qty } avg { weight rating } }
          }
        }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({
            "one": {"aggregate": {
                "stddev": {"qty": null}, "stddev_samp": {"qty": null},
                "var_samp": {"qty": null}, "variance": {"qty": null},
                "stddev_pop": {"qty": 0}, "var_pop": {"qty": 0},
                "avg": {"qty": 1, "weight": 3}
            }},
            // qty: 1 5 1 5 3 → population variance 16/5; rating: avg of 2.25, 0.5, 3.
            "all": {"aggregate": {"var_pop": {"qty": 3.2}, "avg": {"weight": 1.85, "rating": 1.9166666666666667}}}
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_distinct_over_several_columns() {
    let d = data(
        "{ gadgets_aggregate { aggregate { pairs: count(columns: [active, qty], distinct: true) all: count(columns: [active, qty]) } } }",
        Value::Null,
    )
    .await;
    // (true,1) (false,5) (true,1) (false,5) (true,3)
    assert_eq!(
        d,
        json!({"gadgets_aggregate": {"aggregate": {"pairs": 3, "all": 5}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_by_other_aggregates_of_an_array_relationship() {
    let meetups = meetups();
    let max_for = |v: i64| {
        meetups
            .iter()
            .filter(|m| m.venue_id == v)
            .map(|m| m.id)
            .max()
    };
    let mut expected: Vec<(i64, Option<i64>)> =
        venues().iter().map(|v| (v.id, max_for(v.id))).collect();
    // desc puts NULLs (venues without meetups) first, as in Hasura.
    expected.sort_by(|a, b| match (a.1, b.1) {
        (None, None) => a.0.cmp(&b.0),
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x).then(a.0.cmp(&b.0)),
    });
    let expected: Vec<i64> = expected.iter().take(15).map(|(id, _)| *id).collect();
    let d = data(
        "{ venues(order_by: [{meetups_aggregate: {max: {id: desc}}}, {id: asc}], limit: 15) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(d, json!({ "venues": ids_json(expected) }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_offset_and_distinct_on() {
    let meetups = meetups();
    let venue = (1..=ROWS as i64)
        .find(|v| meetups.iter().filter(|m| m.venue_id == *v).count() >= 3)
        .expect("a venue with three meetups");
    let mut ids: Vec<i64> = meetups
        .iter()
        .filter(|m| m.venue_id == venue)
        .map(|m| m.id)
        .collect();
    ids.sort();
    let d = data(
        &format!(
            "{{ venues_by_pk(id: {venue}) {{ skipped: meetups(order_by: {{id: asc}}, offset: 1) {{ id }} \
               distinct: meetups(distinct_on: [venue_id], order_by: [{{venue_id: asc}}, {{id: desc}}]) {{ id }} }} }}"
        ),
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"venues_by_pk": {
            "skipped": ids_json(ids[1..].to_vec()),
            "distinct": [{"id": ids[ids.len() - 1]}]
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_on_without_order_by() {
    let d = data(
        "{ gadgets(distinct_on: [active]) { active } categories(distinct_on: parent_id, order_by: {parent_id: asc}) { parent_id } }",
        Value::Null,
    )
    .await;
    let mut actives: Vec<bool> = d["gadgets"]
        .as_array()
        .expect("gadgets")
        .iter()
        .map(|g| g["active"].as_bool().expect("bool"))
        .collect();
    actives.sort();
    assert_eq!(actives, [false, true]);
    assert_eq!(
        d["categories"],
        json!([{"parent_id": 1}, {"parent_id": 2}, {"parent_id": null}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_response_key_merges_selections() {
    let all = venues();
    let d = data(
        "{ venues_by_pk(id: 1) { id meetups(order_by: {id: asc}, limit: 1) { id } meetups(order_by: {id: asc}, limit: 1) { title } name } }",
        Value::Null,
    )
    .await;
    let first = meetups()
        .into_iter()
        .filter(|m| m.venue_id == 1)
        .min_by_key(|m| m.id);
    let meetups = match first {
        Some(m) => json!([{"id": m.id, "title": m.title}]),
        None => json!([]),
    };
    assert_eq!(
        d,
        json!({"venues_by_pk": {"id": 1, "meetups": meetups, "name": all[0].name}})
    );
    // Same key with different arguments cannot be merged: a validation error.
    let v = both(
        "{ a: venues_by_pk(id: 1) { id } a: venues_by_pk(id: 2) { id } }",
        Value::Null,
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
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
async fn negative_limit_or_offset_is_rejected() {
    for query in [
        "{ venues(limit: -1) { id } }",
        "{ venues(offset: -1) { id } }",
        "{ venues_by_pk(id: 1) { meetups(limit: -5) { id } } }",
    ] {
        let v = both(query, Value::Null).await;
        assert_eq!(error_code(&v), "validation-failed", "{query}: {v}");
    }
    // Through variables the plan is cached, so the check runs per request.
    let query = "query ($l: Int, $o: Int) { venues(limit: $l, offset: $o) { id } }";
    let ok = both(query, json!({"l": 1, "o": 2})).await;
    assert_eq!(ok["data"], json!({"venues": [{"id": 3}]}));
    for vars in [json!({"l": -1, "o": 0}), json!({"l": 1, "o": -2})] {
        let v = both(query, vars.clone()).await;
        assert_eq!(error_code(&v), "validation-failed", "{vars}: {v}");
    }
    // A null limit means no limit, on both backends.
    let all = both(query, json!({"l": null, "o": 195})).await;
    assert_eq!(all["data"]["venues"].as_array().map(Vec::len), Some(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn float_and_boolean_variables() {
    let d = data(
        "query ($w: Float!, $a: Boolean!) { gadgets(where: {weight: {_eq: $w}, active: {_eq: $a}}) { id } }",
        json!({"w": 3, "a": true}),
    )
    .await;
    assert_eq!(d, json!({"gadgets": [{"id": 1}]}));
    let d = data(
        "query ($w: [Float!]) { gadgets(where: {rating: {_in: $w}}) { id } }",
        json!({"w": [2.25, 3.0]}),
    )
    .await;
    assert_eq!(d, json!({"gadgets": [{"id": 1}, {"id": 4}]}));
    // An Int out of 32-bit range is not an Int.
    let v = both(
        "query ($id: Int!) { venues_by_pk(id: $id) { id } }",
        json!({"id": 99_999_999_999_i64}),
    )
    .await;
    assert_eq!(error_code(&v), "validation-failed", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nullable_object_relationship_in_filters_and_order() {
    let d = data(
        r#"{
          uncategorised: gadgets(where: {_not: {category: {}}}) { id }
          categorised: gadgets(where: {category: {}}) { id }
          by_category: gadgets(order_by: [{category: {name: asc}}, {id: asc}]) { id }
          by_category_desc: gadgets(order_by: [{category: {name: desc}}, {id: asc}]) { id }
          by_grandparent: gadgets(order_by: [{category: {parent: {name: desc_nulls_last}}}, {id: desc}]) { id }
        }"#,
        Value::Null,
    )
    .await;
    // anvil→hammers(→tools), ball→toys(→root), chisel→tools(→root), drum→toys(→root), easel→none
    assert_eq!(
        d,
        json!({
            "uncategorised": [{"id": 5}],
            "categorised": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}],
            "by_category": [{"id": 1}, {"id": 3}, {"id": 2}, {"id": 4}, {"id": 5}],
            "by_category_desc": [{"id": 5}, {"id": 2}, {"id": 4}, {"id": 3}, {"id": 1}],
            "by_grandparent": [{"id": 1}, {"id": 4}, {"id": 3}, {"id": 2}, {"id": 5}]
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_foreign_keys_to_the_same_table() {
    let follows: Vec<(i64, i64)> = grafton_demo::Table::MemberFollow
        .rows(ROWS)
        .map(|r| match (&r[0], &r[1]) {
            (grafton_demo::Value::Int(a), grafton_demo::Value::Int(b)) => (*a, *b),
            other => panic!("{other:?}"),
        })
        .collect();
    let member = 7;
    let following: Vec<Value> = follows
        .iter()
        .filter(|(by, _)| *by == member)
        .map(|(_, m)| json!({"member_id": m}))
        .collect();
    let followers: Vec<Value> = follows
        .iter()
        .filter(|(_, m)| *m == member)
        .map(|(by, _)| json!({"created_by": by}))
        .collect();
    let d = data(
        "query ($m: Int!) { members_by_pk(id: $m) {
            member_follows_by_created_by(order_by: {member_id: asc}) { member_id }
            member_follows_by_member_id(order_by: {created_by: asc}) { created_by }
        } }",
        json!({ "m": member }),
    )
    .await;
    assert!(!following.is_empty());
    assert_eq!(
        d,
        json!({"members_by_pk": {
            "member_follows_by_created_by": following,
            "member_follows_by_member_id": followers
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_nodes_with_relationships() {
    let d = data(
        r#"{ categories_aggregate(where: {id: {_lte: 3}}) {
              aggregate { count }
              nodes { name parent { name } gadgets_aggregate { aggregate { count } } gadgets(order_by: {id: asc}) { id } }
        } }"#,
        Value::Null,
    )
    .await;
    assert_eq!(
        d,
        json!({"categories_aggregate": {
            "aggregate": {"count": 3},
            "nodes": [
                {"name": "root", "parent": null, "gadgets_aggregate": {"aggregate": {"count": 0}}, "gadgets": []},
                {"name": "tools", "parent": {"name": "root"}, "gadgets_aggregate": {"aggregate": {"count": 1}}, "gadgets": [{"id": 3}]},
                {"name": "toys", "parent": {"name": "root"}, "gadgets_aggregate": {"aggregate": {"count": 2}}, "gadgets": [{"id": 2}, {"id": 4}]}
            ]
        }})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_with_directives_and_variables() {
    let query = r#"query ($n: String!, $s: Boolean!) {
        __schema @skip(if: $s) { queryType { name } }
        __type(name: $n) { name }
        venues_by_pk(id: 1) { id }
    }"#;
    for (n, s) in [("venues", true), ("meetups", false), ("nope", true)] {
        let d = data(query, json!({"n": n, "s": s})).await;
        let ty = if n == "nope" {
            Value::Null
        } else {
            json!({"name": n})
        };
        let expected = if s {
            json!({"__type": ty, "venues_by_pk": {"id": 1}})
        } else {
            json!({"__schema": {"queryType": {"name": "query_root"}}, "__type": ty, "venues_by_pk": {"id": 1}})
        };
        assert_eq!(d, expected, "n={n} s={s}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extra_undeclared_variables_are_ignored() {
    let d = data(
        "query ($id: Int!) { venues_by_pk(id: $id) { id } }",
        json!({"id": 4, "unused": {"deep": [1, 2]}, "other": null}),
    )
    .await;
    assert_eq!(d, json!({"venues_by_pk": {"id": 4}}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn very_long_in_lists() {
    // More values than SQLite's bind-parameter limit (32766) and Postgres's (65535).
    for n in [1_000_i64, 40_000, 70_000] {
        let ids: Vec<i64> = (1..=n).map(|i| i * 3).collect();
        let d = data(
            "query ($ids: [Int!]) { venues_aggregate(where: {id: {_in: $ids}}) { aggregate { count } } }",
            json!({ "ids": ids }),
        )
        .await;
        assert_eq!(
            d,
            json!({"venues_aggregate": {"aggregate": {"count": ROWS / 3}}}),
            "{n} ids"
        );
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_or_and_lists_up_to_500_items() {
    for n in [2_i64, 100, 500] {
        let any: Vec<Value> = (0..n).map(|i| json!({"id": {"_eq": i * 2}})).collect();
        let all: Vec<Value> = (0..n).map(|i| json!({"id": {"_neq": i * 2}})).collect();
        let d = data(
            "query ($any: [venues_bool_exp!], $all: [venues_bool_exp!]) {
                any: venues_aggregate(where: {_or: $any}) { aggregate { count } }
                all: venues_aggregate(where: {_and: $all}) { aggregate { count } }
            }",
            json!({"any": any, "all": all}),
        )
        .await;
        let evens = (0..n)
            .filter(|i| (1..=ROWS as i64).contains(&(i * 2)))
            .count();
        assert_eq!(
            d,
            json!({"any": {"aggregate": {"count": evens}}, "all": {"aggregate": {"count": ROWS as usize - evens}}}),
            "{n} items"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_or_and_lists_over_1000_items() {
    for n in [1_100_i64, 5_000] {
        let any: Vec<Value> = (0..n).map(|i| json!({"id": {"_eq": i * 2}})).collect();
        let all: Vec<Value> = (0..n).map(|i| json!({"id": {"_neq": i * 2}})).collect();
        let d = data(
            "query ($any: [venues_bool_exp!], $all: [venues_bool_exp!]) {
                any: venues_aggregate(where: {_or: $any}) { aggregate { count } }
                all: venues_aggregate(where: {_and: $all}) { aggregate { count } }
            }",
            json!({"any": any, "all": all}),
        )
        .await;
        assert_eq!(
            d,
            json!({"any": {"aggregate": {"count": ROWS / 2}}, "all": {"aggregate": {"count": ROWS / 2}}}),
            "{n} items"
        );
    }
}
