//! The document and plan caches must never serve one request's answer to
//! another: the same document with different variables, sent repeatedly.

use crate::common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scalar_variables_change_between_requests() {
    let all = venues();
    let query = "query Q($id: Int!) { venues_by_pk(id: $id) { id name } }";
    for round in 0..2 {
        for id in [1, 5, 1, 200, 37] {
            let d = data(query, json!({ "id": id })).await;
            assert_eq!(
                d,
                json!({"venues_by_pk": {"id": id, "name": all[(id - 1) as usize].name}}),
                "round {round}, id {id}"
            );
        }
    }
    let d = data(query, json!({ "id": 9999 })).await;
    assert_eq!(d, json!({"venues_by_pk": null}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_bool_exp_variable_changes_between_requests() {
    let all = venues();
    let query = "query ($w: venues_bool_exp) { venues(where: $w, order_by: {id: asc}) { id } }";
    let tokyo: Vec<i64> = all
        .iter()
        .filter(|v| v.prefecture == "Tokyo")
        .map(|v| v.id)
        .collect();
    let cases: Vec<(Value, Vec<i64>)> = vec![
        (json!({"id": {"_lt": 3}}), vec![1, 2]),
        (json!({"prefecture": {"_eq": "Tokyo"}}), tokyo.clone()),
        (json!({"id": {"_lt": 4}}), vec![1, 2, 3]),
        (
            json!({"_or": [{"id": {"_eq": 7}}, {"id": {"_gt": 198}}]}),
            vec![7, 199, 200],
        ),
        (
            json!({"_and": [{"id": {"_lte": 5}}, {"_not": {"id": {"_eq": 2}}}]}),
            vec![1, 3, 4, 5],
        ),
        (json!({"id": {"_in": [4]}}), vec![4]),
        (json!({"id": {"_in": [4, 8, 15]}}), vec![4, 8, 15]),
        (json!({"id": {"_in": []}}), vec![]),
        (json!({"id": {"_lt": 3}}), vec![1, 2]),
        (json!({"prefecture": {"_eq": "Tokyo"}}), tokyo),
        (json!({"id": {"_is_null": true}}), vec![]),
    ];
    for round in 0..2 {
        for (w, expected) in &cases {
            let d = data(query, json!({ "w": w })).await;
            assert_eq!(
                d,
                json!({"venues": ids_json(expected.clone())}),
                "round {round}, where {w}"
            );
        }
    }
    // Null and absent: no filter.
    for vars in [json!({"w": null}), json!({})] {
        let d = data(query, vars.clone()).await;
        assert_eq!(
            d["venues"].as_array().map(Vec::len),
            Some(ROWS as usize),
            "{vars}"
        );
    }
    let d = data(query, json!({"w": {"id": {"_eq": 3}}})).await;
    assert_eq!(d, json!({"venues": [{"id": 3}]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn include_toggles_between_requests() {
    let all = venues();
    let query = "query ($x: Boolean!, $id: Int!) {
        venues_by_pk(id: $id) { id name @include(if: $x) meetups_aggregate @include(if: $x) { aggregate { count } } }
    }";
    let count = |id: i64| meetups().iter().filter(|m| m.venue_id == id).count();
    for (x, id) in [
        (true, 1),
        (false, 1),
        (true, 2),
        (false, 3),
        (true, 3),
        (false, 1),
    ] {
        let d = data(query, json!({"x": x, "id": id})).await;
        let expected = if x {
            json!({"venues_by_pk": {"id": id, "name": all[(id - 1) as usize].name,
                   "meetups_aggregate": {"aggregate": {"count": count(id)}}}})
        } else {
            json!({"venues_by_pk": {"id": id}})
        };
        assert_eq!(d, expected, "x={x} id={id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_limit_and_offset_variables_change_between_requests() {
    let query = "query ($o: [venues_order_by!], $l: Int, $off: Int) {
        venues(order_by: $o, limit: $l, offset: $off) { id }
    }";
    let cases = [
        (json!({"o": {"id": "asc"}, "l": 3}), vec![1, 2, 3]),
        (json!({"o": {"id": "desc"}, "l": 3}), vec![200, 199, 198]),
        (
            json!({"o": {"id": "desc"}, "l": 2, "off": 5}),
            vec![195, 194],
        ),
        (json!({"o": [{"id": "asc"}], "l": 1, "off": 9}), vec![10]),
        (json!({"l": 2}), vec![1, 2]),
        (json!({"o": {"id": "asc"}, "l": 3}), vec![1, 2, 3]),
    ];
    for round in 0..2 {
        for (vars, expected) in &cases {
            let d = data(query, vars.clone()).await;
            assert_eq!(
                d,
                json!({"venues": ids_json(expected.clone())}),
                "round {round}, {vars}"
            );
        }
    }
    // No limit at all after limited requests.
    let d = data(query, json!({"o": {"id": "desc"}})).await;
    assert_eq!(d["venues"].as_array().map(Vec::len), Some(ROWS as usize));
    assert_eq!(d["venues"][0], json!({"id": ROWS}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_variables_change_between_requests() {
    // Variables inside a nested relationship's arguments.
    let meetups = meetups();
    let query = "query ($v: Int!, $gt: Int!, $n: Int!) {
        venues_by_pk(id: $v) { id meetups(where: {id: {_gt: $gt}}, order_by: {id: asc}, limit: $n) { id } }
    }";
    for (v, gt, n) in [(1, 0, 5), (2, 0, 1), (1, 50, 2), (3, 10, 10), (1, 0, 5)] {
        let mut ids: Vec<i64> = meetups
            .iter()
            .filter(|m| m.venue_id == v && m.id > gt)
            .map(|m| m.id)
            .collect();
        ids.sort();
        ids.truncate(n);
        let d = data(query, json!({"v": v, "gt": gt, "n": n})).await;
        assert_eq!(
            d,
            json!({"venues_by_pk": {"id": v, "meetups": ids_json(ids)}}),
            "v={v} gt={gt} n={n}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_shape_variables_change_between_requests() {
    let all = venues();
    let ids_where = |keep: &dyn Fn(&Venue) -> bool| -> Vec<i64> {
        all.iter().filter(|v| keep(v)).map(|v| v.id).collect()
    };
    // `_is_null: $b` renders IS NULL or IS NOT NULL depending on the value.
    let query = "query ($b: Boolean!) { venues(where: {building: {_is_null: $b}}, order_by: {id: asc}) { id } }";
    for b in [true, false, true, false] {
        let d = data(query, json!({ "b": b })).await;
        let expected = ids_where(&|v| v.building.is_none() == b);
        assert_eq!(d, json!({"venues": ids_json(expected)}), "_is_null: {b}");
    }
    // `_in: $ids` with lists of different lengths.
    let query =
        "query ($ids: [Int!]) { venues(where: {id: {_in: $ids}}, order_by: {id: asc}) { id } }";
    for ids in [vec![5], vec![1, 2, 3], vec![], vec![200, 9], vec![5]] {
        let d = data(query, json!({ "ids": ids })).await;
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(d, json!({"venues": ids_json(sorted)}), "_in {ids:?}");
    }
    // A comparison-expression variable whose operators change.
    let query = "query ($c: String_comparison_exp) { venues(where: {prefecture: $c}, order_by: {id: asc}) { id } }";
    let cases: Vec<(Value, Vec<i64>)> = vec![
        (
            json!({"_eq": "Tokyo"}),
            ids_where(&|v| v.prefecture == "Tokyo"),
        ),
        (
            json!({"_like": "O%"}),
            ids_where(&|v| v.prefecture.starts_with('O')),
        ),
        (json!({"_is_null": true}), vec![]),
        (
            json!({"_in": ["Kyoto", "Osaka"], "_neq": "Osaka"}),
            ids_where(&|v| v.prefecture == "Kyoto"),
        ),
        (
            json!({"_eq": "Tokyo"}),
            ids_where(&|v| v.prefecture == "Tokyo"),
        ),
    ];
    for (c, expected) in cases {
        let d = data(query, json!({ "c": c })).await;
        assert_eq!(d, json!({"venues": ids_json(expected)}), "{c}");
    }
    // A list of boolean expressions under `_or`.
    let query = "query ($any: [venues_bool_exp!]) { venues(where: {_or: $any}, order_by: {id: asc}) { id } }";
    for (any, expected) in [
        (json!([{"id": {"_eq": 1}}]), vec![1]),
        (
            json!([{"id": {"_eq": 1}}, {"id": {"_eq": 3}}, {"id": {"_gt": 199}}]),
            vec![1, 3, 200],
        ),
        (json!([{"id": {"_eq": 2}}]), vec![2]),
    ] {
        let d = data(query, json!({ "any": any })).await;
        assert_eq!(d, json!({"venues": ids_json(expected)}), "{any}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enum_variables_inside_order_by_change_between_requests() {
    let query = "query ($dir: order_by!) { venues(order_by: [{building: $dir}, {id: asc}], limit: 4) { id building } }";
    let all = venues();
    for dir in ["asc", "desc_nulls_last", "asc_nulls_first", "asc", "desc"] {
        let (desc, nulls_first) = match dir {
            "asc" => (false, false),
            "desc" => (true, true),
            "asc_nulls_first" => (false, true),
            _ => (true, false),
        };
        let mut sorted = all.clone();
        sorted.sort_by(|a, b| {
            let o = match (&a.building, &b.building) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) if nulls_first => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(_), None) if nulls_first => std::cmp::Ordering::Greater,
                (Some(_), None) => std::cmp::Ordering::Less,
                (Some(x), Some(y)) if desc => y.cmp(x),
                (Some(x), Some(y)) => x.cmp(y),
            };
            o.then(a.id.cmp(&b.id))
        });
        let expected: Vec<Value> = sorted
            .iter()
            .take(4)
            .map(|v| json!({"id": v.id, "building": v.building}))
            .collect();
        let d = data(query, json!({ "dir": dir })).await;
        assert_eq!(d, json!({ "venues": expected }), "{dir}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_of_one_document_alternate() {
    let document = "query A($id: Int!) { venues_by_pk(id: $id) { id } }
                    query B($id: Int!) { meetups_by_pk(id: $id) { id } }";
    for (op, id) in [("A", 1), ("B", 2), ("A", 3), ("B", 1), ("A", 1)] {
        let v = both_body(json!({"query": document, "operationName": op, "variables": {"id": id}}))
            .await;
        let key = if op == "A" {
            "venues_by_pk"
        } else {
            "meetups_by_pk"
        };
        assert_eq!(v, json!({"data": { key: {"id": id} }}), "{op} {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directives_in_fragments_toggle_between_requests() {
    let query = "query ($a: Boolean!, $b: Boolean!) {
        venues_by_pk(id: 1) { id ...F @include(if: $a) ... @skip(if: $b) { city } }
    }
    fragment F on venues { name }";
    let all = venues();
    for (a, b) in [
        (true, true),
        (false, false),
        (true, false),
        (false, true),
        (true, true),
    ] {
        let d = data(query, json!({"a": a, "b": b})).await;
        let mut v = serde_json::Map::new();
        v.insert("id".into(), json!(1));
        if a {
            v.insert("name".into(), json!(all[0].name));
        }
        if !b {
            v.insert("city".into(), json!(all[0].city));
        }
        assert_eq!(d, json!({ "venues_by_pk": v }), "a={a} b={b}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_on_and_count_arguments_as_variables() {
    let query = "query ($d: [gadgets_select_column!], $o: [gadgets_order_by!], $c: [gadgets_select_column!], $dist: Boolean) {
        gadgets(distinct_on: $d, order_by: $o) { id }
        gadgets_aggregate { aggregate { count(columns: $c, distinct: $dist) } }
    }";
    let cases = [
        (
            json!({"d": ["active"], "o": [{"active": "asc"}, {"id": "asc"}], "c": ["rating"], "dist": false}),
            json!({"gadgets": [{"id": 2}, {"id": 1}], "gadgets_aggregate": {"aggregate": {"count": 3}}}),
        ),
        (
            json!({"d": ["qty"], "o": [{"qty": "desc"}, {"id": "desc"}], "c": ["qty"], "dist": true}),
            json!({"gadgets": [{"id": 4}, {"id": 5}, {"id": 3}], "gadgets_aggregate": {"aggregate": {"count": 3}}}),
        ),
        (
            json!({"o": [{"id": "desc"}], "c": ["note"]}),
            json!({"gadgets": [{"id": 5}, {"id": 4}, {"id": 3}, {"id": 2}, {"id": 1}], "gadgets_aggregate": {"aggregate": {"count": 3}}}),
        ),
        (
            json!({"d": ["active"], "o": [{"active": "desc"}, {"id": "desc"}], "c": ["weight"], "dist": true}),
            json!({"gadgets": [{"id": 5}, {"id": 4}], "gadgets_aggregate": {"aggregate": {"count": 3}}}),
        ),
        (
            json!({"d": ["active"], "o": [{"active": "asc"}, {"id": "asc"}], "c": ["weight"], "dist": false}),
            json!({"gadgets": [{"id": 2}, {"id": 1}], "gadgets_aggregate": {"aggregate": {"count": 5}}}),
        ),
    ];
    for round in 0..2 {
        for (vars, expected) in &cases {
            let d = data(query, vars.clone()).await;
            assert_eq!(&d, expected, "round {round}: {vars}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregate_order_direction_variable() {
    let mut counts: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
    for m in meetups() {
        *counts.entry(m.venue_id).or_default() += 1;
    }
    let query = "query ($dir: order_by!) { venues(order_by: [{meetups_aggregate: {count: $dir}}, {id: asc}], limit: 5) { id } }";
    for dir in ["desc", "asc", "desc"] {
        let mut all: Vec<(i64, i64)> = (1..=ROWS as i64)
            .map(|v| (v, counts.get(&v).copied().unwrap_or(0)))
            .collect();
        all.sort_by(|a, b| {
            let o = if dir == "desc" {
                b.1.cmp(&a.1)
            } else {
                a.1.cmp(&b.1)
            };
            o.then(a.0.cmp(&b.0))
        });
        let expected: Vec<i64> = all.iter().take(5).map(|(v, _)| *v).collect();
        let d = data(query, json!({ "dir": dir })).await;
        assert_eq!(d, json!({"venues": ids_json(expected)}), "{dir}");
    }
}
