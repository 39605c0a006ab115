//! Depth, node, root-field and cost limits, checked before any SQL: each at its
//! boundary, per role, with admin exempt unless named; and `--default-limit`.

use crate::*;
use serde_json::json;

#[tokio::test]
async fn depth_limit_at_its_boundary_per_role_and_for_admin() {
    run(async {
        for db in BOTH {
            let url = url(db);
            // user: the global limit of 4.
            let (status, body) = post(url, Some("user"), &chain(4), json!({})).await;
            assert_eq!(status, 200);
            assert_eq!(
                data(body)["nodes_by_pk"]["parent"]["parent"]["id"],
                48,
                "{db:?}"
            );
            let (status, body) = post(url, Some("user"), &chain(5), json!({})).await;
            assert_eq!(
                (status, code(&body)),
                (200, "depth-limit-exceeded"),
                "{db:?} {body}"
            );
            let message = body["errors"][0]["message"].as_str().unwrap_or("");
            assert!(message.contains('5') && message.contains('4'), "{message}");
            assert!(
                body.get("data").is_none(),
                "a request error has no data: {body}"
            );
            // deep: its own limit of 8.
            let (_, body) = post(url, Some("deep"), &chain(8), json!({})).await;
            data(body);
            let (_, body) = post(url, Some("deep"), &chain(9), json!({})).await;
            assert_eq!(code(&body), "depth-limit-exceeded", "{db:?}");
            // admin: exempt from the global limit, held to the one per_role names.
            let (_, body) = post(url, None, &chain(12), json!({})).await;
            data(body);
            let (_, body) = post(url, None, &chain(13), json!({})).await;
            assert_eq!(code(&body), "depth-limit-exceeded", "{db:?}");
        }
    })
}

#[tokio::test]
async fn fragments_count_every_time_they_are_spread() {
    run(async {
        // Depth 3 written, depth 5 once the fragment is expanded.
        let query = "{ nodes_by_pk(id: 9) { ...P } } fragment P on nodes { parent { parent { parent { id } } } }";
        let (_, body) = post(url(Db::Sqlite), Some("user"), query, json!({})).await;
        assert_eq!(code(&body), "depth-limit-exceeded", "{body}");
    })
}

#[tokio::test]
async fn node_and_root_field_limits_at_their_boundaries() {
    run(async {
        for db in BOTH {
            let url = url(db);
            let fields = |n: usize| {
                let ids: Vec<String> = (0..n - 1).map(|i| format!("f{i}: id")).collect();
                format!("{{ nodes_by_pk(id: 1) {{ {} }} }}", ids.join(" "))
            };
            let (_, body) = post(url, Some("user"), &fields(20), json!({})).await;
            assert_eq!(data(body)["nodes_by_pk"]["f18"], 1, "{db:?}");
            let (_, body) = post(url, Some("user"), &fields(21), json!({})).await;
            assert_eq!(code(&body), "node-limit-exceeded", "{db:?} {body}");
            // Admin is exempt from both.
            let (_, body) = post(url, None, &fields(21), json!({})).await;
            data(body);

            let roots = |n: usize| {
                let r: Vec<String> = (0..n)
                    .map(|i| format!("r{i}: nodes_by_pk(id: {}) {{ id }}", i + 1))
                    .collect();
                format!("{{ {} }}", r.join(" "))
            };
            let (_, body) = post(url, Some("user"), &roots(3), json!({})).await;
            assert_eq!(data(body)["r2"]["id"], 3);
            let (_, body) = post(url, Some("user"), &roots(4), json!({})).await;
            assert_eq!(code(&body), "root-field-limit-exceeded", "{db:?} {body}");
        }
    })
}

#[tokio::test]
async fn introspection_fields_count_as_nodes() {
    run(async {
        let q = "{ __schema { queryType { name } } a: __typename b: __typename c: __typename }";
        let (_, body) = post(url(Db::Sqlite), Some("user"), q, json!({})).await;
        assert_eq!(code(&body), "root-field-limit-exceeded", "{body}");
        let fields: Vec<String> = (0..10).map(|i| format!("t{i}: name")).collect();
        let q = format!("{{ __schema {{ types {{ {} kind }} }} }}", fields.join(" "));
        // __schema + types + 11 fields = 13: under; 8 more aliases under types: over.
        let (_, body) = post(url(Db::Sqlite), Some("user"), &q, json!({})).await;
        data(body);
        let more = q.replace(
            "kind",
            "kind k1: kind k2: kind k3: kind k4: kind k5: kind k6: kind k7: kind k8: kind",
        );
        let (_, body) = post(url(Db::Sqlite), Some("user"), &more, json!({})).await;
        assert_eq!(code(&body), "node-limit-exceeded", "{body}");
    })
}

#[tokio::test]
async fn cost_limit_follows_limits_variables_role_caps_and_filters() {
    run(async {
        for db in BOTH {
            let url = url(db);
            // A list costs its limit: 1,000 passes, 1,001 fails, literal or variable.
            let q = "query($n: Int) { nodes(limit: $n) { id } }";
            let (_, body) = post(url, Some("user"), q, json!({"n": 1000})).await;
            assert_eq!(data(body)["nodes"].as_array().map(Vec::len), Some(NODES));
            let (_, body) = post(url, Some("user"), q, json!({"n": 1001})).await;
            assert_eq!(code(&body), "cost-limit-exceeded", "{db:?} {body}");
            let message = body["errors"][0]["message"].as_str().unwrap_or("");
            assert!(
                message.contains("1001") && message.contains("1000"),
                "{message}"
            );
            // Nested lists multiply: 10 + 10 × 99 = 1,000 passes; 10 + 10 × 100 fails.
            let nested = |inner: u32| {
                format!("{{ nodes(limit: 10) {{ id nodes(limit: {inner}) {{ id }} }} }}")
            };
            let (_, body) = post(url, Some("user"), &nested(99), json!({})).await;
            data(body);
            let (_, body) = post(url, Some("user"), &nested(100), json!({})).await;
            assert_eq!(code(&body), "cost-limit-exceeded", "{db:?}");
            // A list without a limit counts as 10,000 rows, unless the role caps it.
            let (_, body) = post(url, Some("user"), "{ nodes { id } }", json!({})).await;
            assert_eq!(code(&body), "cost-limit-exceeded", "{db:?}");
            let (_, body) = post(
                url,
                Some("capped"),
                "{ nodes { id nodes { id } } }",
                json!({}),
            )
            .await;
            assert_eq!(data(body)["nodes"].as_array().map(Vec::len), Some(5));
            // Each value of an `_in` list is a predicate: a huge filter costs its size.
            let ids: Vec<u32> = (0..995).collect();
            let q = "query($ids: [Int!]) { nodes(limit: 5, where: {id: {_in: $ids}}) { id } }";
            let (_, body) = post(url, Some("user"), q, json!({"ids": ids})).await;
            data(body);
            let ids: Vec<u32> = (0..996).collect();
            let (_, body) = post(url, Some("user"), q, json!({"ids": ids})).await;
            assert_eq!(code(&body), "cost-limit-exceeded", "{db:?} {body}");
            // So is an aggregate predicate's (one more for its subquery).
            let q = "query($ids: [Int!]) { nodes(limit: 5, where: {nodes_aggregate: {count: {predicate: {_in: $ids}}}}) { id } }";
            let ids: Vec<u32> = (0..994).collect();
            let (_, body) = post(url, Some("user"), q, json!({"ids": ids})).await;
            data(body);
            let ids: Vec<u32> = (0..995).collect();
            let (_, body) = post(url, Some("user"), q, json!({"ids": ids})).await;
            assert_eq!(code(&body), "cost-limit-exceeded", "{db:?} {body}");
            // Admin is exempt.
            let (_, body) = post(url, None, "{ nodes { id } }", json!({})).await;
            data(body);
        }
    })
}

#[tokio::test]
async fn default_limit_bounds_lists_but_not_counts() {
    run(async {
        for db in BOTH {
            let mut o = options(db);
            o.limits.default_limit = Some(3);
            let url = start(o);
            let q = "{ nodes { id nodes { id } } few: nodes(limit: 5) { id } nodes_aggregate { aggregate { count } } }";
            let (_, body) = post(&url, None, q, json!({})).await;
            let d = data(body);
            assert_eq!(d["nodes"].as_array().map(Vec::len), Some(3), "{db:?}");
            assert_eq!(d["nodes"][0]["id"], 1, "a default page is ordered by key");
            assert_eq!(d["few"].as_array().map(Vec::len), Some(5));
            assert_eq!(d["nodes_aggregate"]["aggregate"]["count"], NODES);
        }
    })
}

#[tokio::test]
async fn hasura_api_limits_yaml_is_read_from_metadata() {
    let dir = hasura_metadata(
        "limits-md",
        &[(
            "api_limits.yaml",
            "disabled: false\ndepth_limit:\n  global: 3\n  per_role: {}\nnode_limit:\n  global: 100\n  per_role: {}\n",
        )],
    );
    let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
    let mut o = options(Db::Postgres);
    o.config = config;
    run(async move {
        let url = start(o);
        let (_, body) = post(&url, Some("user"), &chain(3), json!({})).await;
        data(body);
        let (_, body) = post(&url, Some("user"), &chain(4), json!({})).await;
        assert_eq!(code(&body), "depth-limit-exceeded", "{body}");
    })
}

#[tokio::test]
async fn a_huge_or_in_variables_costs_what_it_weighs() {
    run(async {
        for db in BOTH {
            // 4,000 `_or` branches (the JIT attack): refused by cost for a role,
            // before PostgreSQL plans or compiles anything.
            let branches: Vec<serde_json::Value> =
                (0..4000).map(|i| json!({"id": {"_eq": i}})).collect();
            let q = "query($w: nodes_bool_exp) { nodes(limit: 1, where: $w) { id } }";
            let (_, body) = post(url(db), Some("user"), q, json!({"w": {"_or": branches}})).await;
            assert_eq!(code(&body), "cost-limit-exceeded", "{db:?} {body}");
            // 900 branches fit in 1,000.
            let branches: Vec<serde_json::Value> =
                (0..900).map(|i| json!({"id": {"_eq": i}})).collect();
            let (_, body) = post(url(db), Some("user"), q, json!({"w": {"_or": branches}})).await;
            assert_eq!(data(body)["nodes"][0]["id"], 1, "{db:?}");
        }
    })
}
