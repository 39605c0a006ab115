//! The Relay API (`/v1beta1/relay`), as Hasura serves it: `<t>_connection`
//! pages by cursor, forwards and backwards, under every sort Hasura offers,
//! each page's rows checked against the same order in plain SQL; global ids
//! and cursors byte for byte Hasura's; `node(id:)` under the role's rules; the
//! arguments Hasura refuses refused with its messages.

use crate::client;
use crate::fresh_server::{ids, ids_by_sql, post, serve_with_functions};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../fixtures/sql/relay.postgres.sql");

/// A `user` reads their own author row, and their articles or published ones,
/// without the `id` column (the global id is served all the same, as Hasura's).
const METADATA: &str = r#"
- table: {schema: public, name: author}
  array_relationships:
    - name: articles
      using: {foreign_key_constraint_on: {column: author_id, table: {schema: public, name: article}}}
  select_permissions:
    - role: user
      permission: {columns: [id, name], filter: {id: {_eq: X-Hasura-User-Id}}}
- table: {schema: public, name: article}
  object_relationships:
    - name: author
      using: {foreign_key_constraint_on: author_id}
  select_permissions:
    - role: user
      permission:
        columns: [title, content, rating, is_published, author_id]
        filter: {_or: [{author_id: {_eq: X-Hasura-User-Id}}, {is_published: {_eq: true}}]}
- table: {schema: public, name: pair}
- table: {schema: public, name: log}
"#;

/// Hasura's relay tests' function.
const FUNCTIONS: &str = "- function: {schema: public, name: search_articles}\n";

/// A fresh database with the fixture, served.
async fn serve(prefix: &str, fixture: &str, metadata: &str) -> (String, grafton_server::Running) {
    serve_with_functions(prefix, fixture, metadata, FUNCTIONS).await
}

fn relay_url(server: &grafton_server::Running) -> String {
    server.url().replace("/v1/graphql", "/v1beta1/relay")
}

/// The decoded text of a base64 value.
pub(crate) fn decoded(text: &Value) -> String {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_str().expect("a string"))
        .expect("base64");
    String::from_utf8(bytes).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_and_cursors_are_hasuras_and_name_their_rows() {
    let (_url, server) = serve("relay_ids", FIXTURE, METADATA).await;
    let relay = relay_url(&server);
    let v = post(
        &relay,
        &[],
        "{ article_connection(first: 1) { edges { cursor node { id title } } }
           pair_connection(first: 1) { edges { node { id note } } }
           search_articles_connection(args: {search: \"6\"}) { edges { cursor node { id title } } } }",
        json!({}),
    )
    .await;
    let edge = &v["data"]["article_connection"]["edges"][0];
    // Hasura's own bytes (its relay tests): `{"id" : 1}` and `[1, "public", "article", 1]`.
    assert_eq!(edge["cursor"], "eyJpZCIgOiAxfQ==", "{v}");
    assert_eq!(
        edge["node"]["id"], "WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSIsIDFd",
        "{v}"
    );
    // A function's connection, as Hasura's test answers it.
    let found = &v["data"]["search_articles_connection"]["edges"];
    assert_eq!(found[0]["cursor"], "eyJpZCIgOiA2fQ==", "{v}");
    assert_eq!(
        found[0]["node"]["id"],
        "WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSIsIDZd"
    );
    assert_eq!(found[1]["node"]["title"], "Article 16");
    let pair = &v["data"]["pair_connection"]["edges"][0]["node"];
    assert_eq!(decoded(&pair["id"]), r#"[1, "public", "pair", 1, "x"]"#);

    // Each id is its row's, through `node` and its fragments.
    let q = "query($id: ID!) { node(id: $id) { __typename id
               ... on article { title } ... on pair { note } ... on Node { id } } }";
    let v = post(&relay, &[], q, json!({"id": pair["id"]})).await;
    assert_eq!(
        v["data"]["node"],
        json!({"__typename": "pair", "id": pair["id"], "note": "one x"}),
        "{v}"
    );
    let v = post(&relay, &[], q, json!({"id": edge["node"]["id"]})).await;
    assert_eq!(v["data"]["node"]["title"], "Article 1", "{v}");
    // A literal id, pasted with a newline.
    let literal =
        "{ node(id: \"WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSIsIDFd\\n\") { ... on article { title } } }";
    let v = post(&relay, &[], literal, json!({})).await;
    assert_eq!(v["data"]["node"]["title"], "Article 1", "{v}");

    // The schema: connections and `node`, no lists; `id` is the global id.
    let v = post(
        &relay,
        &[],
        "{ __schema { queryType { fields { name } } }
           article: __type(name: \"article\") { interfaces { name } fields { name type { ofType { name } } } }
           log: __type(name: \"log\") { interfaces { name } } }",
        json!({}),
    )
    .await;
    let roots: Vec<&str> = (v["data"]["__schema"]["queryType"]["fields"].as_array())
        .expect("fields")
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(
        roots,
        [
            "node",
            "article_connection",
            "author_connection",
            "pair_connection",
            "search_articles_connection"
        ],
        "{v}"
    );
    assert_eq!(
        v["data"]["article"]["interfaces"],
        json!([{"name": "Node"}])
    );
    let id = (v["data"]["article"]["fields"]
        .as_array()
        .expect("fields")
        .iter())
    .find(|f| f["name"] == "id")
    .expect("an id field");
    assert_eq!(id["type"]["ofType"]["name"], "ID", "{v}");
    // A table without a key is no `Node` (its type is its writes' answer).
    assert_eq!(v["data"]["log"]["interfaces"], json!([]), "{v}");
    server.stop().await;
}

/// Every page of `order` forwards (`first`) and backwards (`last`), by cursor
/// variables or literals, against `sql` (the same order in plain SQL).
async fn pages_match(relay: &str, order: &str, sql: &str, url: &str, literal: bool) {
    let expected: Vec<Value> = {
        let q = format!("SELECT coalesce(json_agg(title ORDER BY {sql}), '[]') FROM article");
        let text = grafton_testkit::query_one(url, &q);
        serde_json::from_str(text.trim()).expect("titles")
    };
    let page = |direction: &str, cursor: Option<&Value>| {
        let (size, side) = match direction {
            "forward" => ("first", "after"),
            _ => ("last", "before"),
        };
        let cursor_arg = match (cursor, literal) {
            (None, _) => String::new(),
            (Some(c), true) => format!(", {side}: {c}"),
            (Some(_), false) => format!(", {side}: $c"),
        };
        let q = format!(
            "query($c: String) {{ article_connection({size}: 4{cursor_arg}, order_by: {order}) {{
               pageInfo {{ startCursor endCursor hasNextPage hasPreviousPage }}
               edges {{ cursor node {{ title }} }} }} }}"
        );
        (q, json!({ "c": cursor }))
    };
    for direction in ["forward", "backward"] {
        let forward = direction == "forward";
        let (mut seen, mut cursor, mut pages) = (Vec::new(), None::<Value>, 0);
        loop {
            let (q, vars) = page(direction, cursor.as_ref());
            let v = post(relay, &[], &q, vars).await;
            let c = &v["data"]["article_connection"];
            let edges = c["edges"]
                .as_array()
                .unwrap_or_else(|| panic!("{order}: {v}"));
            let titles: Vec<Value> = edges.iter().map(|e| e["node"]["title"].clone()).collect();
            let info = &c["pageInfo"];
            assert_eq!(info["startCursor"], edges[0]["cursor"], "{order}: {v}");
            assert_eq!(info["endCursor"], edges[edges.len() - 1]["cursor"]);
            // Forwards, there are rows before every page but the first (and
            // backwards, after every page but the last).
            let (behind, ahead) = match forward {
                true => ("hasPreviousPage", "hasNextPage"),
                false => ("hasNextPage", "hasPreviousPage"),
            };
            assert_eq!(
                info[behind],
                pages > 0,
                "{order} {direction} page {pages}: {v}"
            );
            match forward {
                true => seen.extend(titles),
                false => drop(seen.splice(0..0, titles)),
            }
            pages += 1;
            if info[ahead] == false {
                break;
            }
            assert!(pages < 10, "{order}: never ends");
            let next = if forward { "endCursor" } else { "startCursor" };
            cursor = Some(info[next].clone());
        }
        assert_eq!(seen, expected, "{order} {direction}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_forwards_and_backwards_are_the_sql_order() {
    let (url, server) = serve("relay_pages", FIXTURE, METADATA).await;
    let relay = relay_url(&server);
    let orders = [
        ("{}", "id"),
        ("{rating: desc}", "rating DESC NULLS FIRST, id"),
        ("{rating: asc}", "rating ASC NULLS LAST, id"),
        (
            "[{rating: asc_nulls_first}, {title: desc}]",
            "rating ASC NULLS FIRST, title DESC, id",
        ),
        (
            "{rating: desc_nulls_last, id: desc}",
            "rating DESC NULLS LAST, id DESC",
        ),
        (
            "{author: {name: asc}}",
            "(SELECT name FROM author WHERE author.id = article.author_id), id",
        ),
        // Keys compared as their own types: float4, char(n) and citext.
        ("{score: asc}", "score ASC NULLS LAST, id"),
        ("{code: desc}", "code DESC NULLS FIRST, id"),
        (
            "{tag: asc, score: desc}",
            "tag ASC NULLS LAST, score DESC NULLS FIRST, id",
        ),
        // And types Grafton serves as String: a domain, inet.
        (
            "{ip: desc, shelf: asc}",
            "ip DESC NULLS FIRST, shelf ASC NULLS LAST, id",
        ),
        // Arrays, compared as their own array types: inet[] (served as String)
        // and citext[] (element by element, case-insensitively).
        ("{ips: asc}", "ips ASC NULLS LAST, id"),
        ("{tags: desc}", "tags DESC NULLS FIRST, id"),
    ];
    for (i, (order, sql)) in orders.into_iter().enumerate() {
        pages_match(&relay, order, sql, &url, i % 2 == 1).await;
    }
    // A citext[] column is compared as citext[] in `where` too (text[] has no
    // operators with it).
    for (filter, sql) in [
        (
            r#"{tags: {_eq: ["RED", "X1"]}}"#,
            "tags = '{RED,X1}'::citext[]",
        ),
        (r#"{tags: {_contains: ["X2"]}}"#, "tags @> '{X2}'::citext[]"),
    ] {
        let v = post(
            &server.url(),
            &[],
            &format!("{{ article(where: {filter}, order_by: {{id: asc}}) {{ id }} }}"),
            Value::Null,
        )
        .await;
        let expected = ids_by_sql(&url, "article", sql);
        assert_eq!(ids(&v["data"]["article"]), expected, "{filter}: {v}");
        assert!(expected.as_array().is_some_and(|a| !a.is_empty()), "{sql}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_pages_and_finds_only_its_rows() {
    let (url, server) = serve("relay_roles", FIXTURE, METADATA).await;
    let relay = relay_url(&server);
    let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "2")];
    let v = post(
        &relay,
        &user,
        "{ article_connection(first: 100) { edges { node { id title } } }
           author_connection { edges { node { name
             articles_connection(first: 2, order_by: {title: desc}) {
               edges { node { title } } pageInfo { hasNextPage } } } } } }",
        json!({}),
    )
    .await;
    let titles: Vec<Value> = (v["data"]["article_connection"]["edges"].as_array())
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|e| e["node"]["title"].clone())
        .collect();
    let sql = "SELECT json_agg(title ORDER BY id) FROM article WHERE author_id = 2 OR is_published";
    let expected: Value =
        serde_json::from_str(grafton_testkit::query_one(&url, sql).trim()).expect("titles");
    assert_eq!(Value::from(titles), expected);
    let authors = &v["data"]["author_connection"]["edges"];
    assert_eq!(authors.as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(authors[0]["node"]["name"], "Ann");
    let sql = "SELECT json_agg(title ORDER BY title DESC) FROM (SELECT title FROM article
               WHERE author_id = 2 ORDER BY title DESC LIMIT 2) a";
    let expected: Value =
        serde_json::from_str(grafton_testkit::query_one(&url, sql).trim()).expect("titles");
    let nested: Vec<Value> = (authors[0]["node"]["articles_connection"]["edges"].as_array())
        .expect("edges")
        .iter()
        .map(|e| e["node"]["title"].clone())
        .collect();
    assert_eq!(Value::from(nested), expected, "{v}");
    assert_eq!(
        authors[0]["node"]["articles_connection"]["pageInfo"]["hasNextPage"],
        true
    );

    // Another author's unpublished article is no node of this role's: null.
    let hidden: i64 = grafton_testkit::query_one(
        &url,
        "SELECT min(id) FROM article WHERE author_id <> 2 AND NOT is_published",
    )
    .trim()
    .parse()
    .expect("an id");
    let id = |table: &str, key: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .encode(format!("[1, \"public\", \"{table}\", {key}]"))
    };
    let q = "query($id: ID!) { node(id: $id) { id ... on article { title } } }";
    let v = post(
        &relay,
        &user,
        q,
        json!({"id": id("article", &hidden.to_string())}),
    )
    .await;
    assert_eq!(v, json!({"data": {"node": null}}));
    let v = post(
        &relay,
        &[],
        q,
        json!({"id": id("article", &hidden.to_string())}),
    )
    .await;
    assert!(
        v["data"]["node"]["title"].is_string(),
        "admin reads it: {v}"
    );
    // Nor is an author other than the caller.
    let v = post(&relay, &user, q, json!({"id": id("author", "1")})).await;
    assert_eq!(v, json!({"data": {"node": null}}));
    // A table the role cannot read is no table of its at all.
    let v = post(&relay, &user, q, json!({"id": id("pair", "1, \"x\"")})).await;
    assert_eq!(
        v["errors"][0]["message"], "invalid node id: no such table found: 'public.pair'",
        "{v}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_hasura_refuses_is_refused_with_its_words() {
    let (_url, server) = serve("relay_refusals", FIXTURE, METADATA).await;
    let relay = relay_url(&server);
    let cases = [
        (
            "{ article_connection(first: 1, last: 1) { edges { cursor } } }",
            json!({}),
            "\"first\" and \"last\" are not allowed at once",
        ),
        (
            "{ article_connection(after: \"eyJpZCIgOiAxfQ==\", before: \"eyJpZCIgOiAxfQ==\") { edges { cursor } } }",
            json!({}),
            "\"after\" and \"before\" are not allowed at once",
        ),
        (
            "{ article_connection(first: 1, after: \"bm9wZQ==\") { edges { cursor } } }",
            json!({}),
            "the \"after\" or \"before\" cursor is invalid",
        ),
        // A cursor of another order lacks its keys.
        (
            "query($c: String) { article_connection(first: 1, after: $c, order_by: {title: asc}) { edges { cursor } } }",
            json!({"c": "eyJpZCIgOiAxfQ=="}),
            "the \"after\" or \"before\" cursor is invalid",
        ),
        (
            "query($n: Int) { article_connection(first: $n) { edges { cursor } } }",
            json!({"n": -1}),
            "must not be negative",
        ),
        (
            "{ node(id: \"WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSJd\") { id } }",
            json!({}),
            "invalid node id: GUID version 1: expecting schema name, table name and at least one column value",
        ),
        (
            "query($id: ID!) { node(id: $id) { id } }",
            json!({"id": "WzEsICJwdWJsaWMiLCAiYXJ0aWNsZSIsIDEsIDJd"}),
            "invalid node id: unexpected column values 2",
        ),
        (
            "{ node(id: \"WzEsICJwdWJsaWMiLCAibG9nIiwgMV0=\") { id } }",
            json!({}),
            "invalid node id: no such table found: 'public.log'",
        ),
    ];
    for (query, variables, message) in cases {
        let v = post(&relay, &[], query, variables).await;
        let error = &v["errors"][0];
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains(message)),
            "{query}: {v}"
        );
        assert_eq!(
            error["extensions"]["code"], "validation-failed",
            "{query}: {v}"
        );
    }
    // `/v1/graphql` is untouched: `id` is the column there, and no connection.
    let v = post(
        &server.url(),
        &[],
        "{ article(limit: 1) { id } }",
        json!({}),
    )
    .await;
    assert_eq!(v, json!({"data": {"article": [{"id": 1}]}}));
    let v = post(
        &server.url(),
        &[],
        "{ article_connection { edges { cursor } } }",
        json!({}),
    )
    .await;
    assert!(v["errors"].is_array(), "{v}");

    // A write through the Relay API answers global ids.
    let v = post(
        &relay,
        &[],
        "mutation { insert_author_one(object: {name: \"Dee\"}) { id name } }",
        json!({}),
    )
    .await;
    assert_eq!(
        decoded(&v["data"]["insert_author_one"]["id"]),
        r#"[1, "public", "author", 4]"#,
        "{v}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_subscription_is_a_live_page() {
    let (_url, server) = serve("relay_live", FIXTURE, METADATA).await;
    let payload = json!({"headers": {
        "x-hasura-admin-secret": crate::ADMIN_SECRET,
        "x-hasura-role": "user",
        "x-hasura-user-id": "3",
    }});
    let mut ws =
        client::Client::connect_at(&server, "/v1beta1/relay", client::TRANSPORT_WS, payload).await;
    ws.start(
        "page",
        "subscription { author_connection { edges { node { id name } } } }",
        Value::Null,
    )
    .await;
    let first = ws.result("page").await;
    let edges = &first["data"]["author_connection"]["edges"];
    assert_eq!(edges[0]["node"]["name"], "Bob", "{first}");
    assert_eq!(
        decoded(&edges[0]["node"]["id"]),
        r#"[1, "public", "author", 3]"#
    );
    // A write moves it.
    let v = post(
        &server.url(),
        &[],
        "mutation { update_author_by_pk(pk_columns: {id: 3}, _set: {name: \"Bo\"}) { id } }",
        json!({}),
    )
    .await;
    assert_eq!(v["data"]["update_author_by_pk"]["id"], 3, "{v}");
    let moved = ws.result("page").await;
    assert_eq!(
        moved["data"]["author_connection"]["edges"][0]["node"]["name"], "Bo",
        "{moved}"
    );
    ws.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shape_of_a_page_answers_one_object() {
    let (_url, server) = serve("relay_shapes", FIXTURE, METADATA).await;
    let relay = relay_url(&server);
    // Nothing aggregated selected: still one connection object.
    let v = post(
        &relay,
        &[],
        "{ a: article_connection(first: 5) { pageInfo { hasPreviousPage } }
           b: article_connection { __typename }
           c: article_connection(first: 3) { pageInfo { __typename } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        v["data"],
        json!({
            "a": {"pageInfo": {"hasPreviousPage": false}},
            "b": {"__typename": "articleConnection"},
            "c": {"pageInfo": {"__typename": "PageInfo"}}
        }),
        "{v}"
    );

    // DISTINCT ON keeps the same row of each group whichever way it pages.
    let q = |size: &str| {
        format!(
            "{{ article_connection({size}: 10, distinct_on: [author_id],
                 order_by: [{{author_id: asc}}, {{rating: desc_nulls_last}}, {{id: desc}}]) {{
                 edges {{ node {{ title }} }} }} }}"
        )
    };
    let forwards = post(&relay, &[], &q("first"), json!({})).await;
    let backwards = post(&relay, &[], &q("last"), json!({})).await;
    let edges = &forwards["data"]["article_connection"]["edges"];
    assert_eq!(edges.as_array().map(Vec::len), Some(3), "{forwards}");
    assert_eq!(
        backwards["data"]["article_connection"]["edges"], *edges,
        "{backwards}"
    );

    // A write's answer pages by cursor variable too.
    let first = post(
        &relay,
        &[],
        "{ author_connection(where: {name: {_eq: \"Ann\"}}) { edges { node {
             articles_connection(first: 1) { edges { cursor node { title } } } } } } }",
        json!({}),
    )
    .await;
    let edge =
        &first["data"]["author_connection"]["edges"][0]["node"]["articles_connection"]["edges"][0];
    let v = post(
        &relay,
        &[],
        "mutation($c: String) { update_author_by_pk(pk_columns: {id: 2}, _set: {name: \"Ann\"}) {
           articles_connection(first: 1, after: $c) { edges { node { title } } } } }",
        json!({"c": edge["cursor"]}),
    )
    .await;
    let next = &v["data"]["update_author_by_pk"]["articles_connection"]["edges"];
    assert_eq!(next.as_array().map(Vec::len), Some(1), "{v}");
    assert_ne!(next[0]["node"]["title"], edge["node"]["title"], "{v}");
    let v = post(
        &relay,
        &[],
        "mutation($c: String) { update_author_by_pk(pk_columns: {id: 2}, _set: {name: \"Ann\"}) {
           articles_connection(first: 1, after: $c) { edges { node { title } } } } }",
        json!({"c": "bm9wZQ=="}),
    )
    .await;
    assert_eq!(
        v["errors"][0]["message"], "the \"after\" or \"before\" cursor is invalid",
        "{v}"
    );
    server.stop().await;
}

/// Every page of meetups (40 of them, `venue_id` nullable with ties) under
/// `order`, forwards and backwards, on SQLite, against the list API's order.
async fn sqlite_pages_match(order: &str, list_order: &str) {
    use crate::common::{base_url, post_to, Server};
    let base = base_url(Server::Sqlite);
    let list =
        format!("{{ meetups(where: {{id: {{_lte: 40}}}}, order_by: {list_order}) {{ id }} }}");
    let (_, v, _) = post_to(&format!("{base}/v1/graphql"), &json!({"query": list})).await;
    let expected = v["data"]["meetups"].clone();
    assert_eq!(expected.as_array().map(Vec::len), Some(40), "{v}");
    let relay = format!("{base}/v1beta1/relay");
    for (size, side, next, more) in [
        ("first", "after", "endCursor", "hasNextPage"),
        ("last", "before", "startCursor", "hasPreviousPage"),
    ] {
        let (mut seen, mut cursor) = (Vec::new(), Value::Null);
        for page in 0.. {
            assert!(page < 10, "{order}: never ends");
            let q = format!(
                "query($c: String) {{ meetups_connection({size}: 6, {side}: $c,
                   where: {{id: {{_lte: 40}}}}, order_by: {order}) {{
                   pageInfo {{ {next} {more} }} edges {{ node {{ id }} }} }} }}"
            );
            let body = json!({"query": q, "variables": {"c": cursor}});
            let (_, v, _) = post_to(&relay, &body).await;
            let c = &v["data"]["meetups_connection"];
            let ids: Vec<Value> = (c["edges"].as_array())
                .unwrap_or_else(|| panic!("{order}: {v}"))
                .iter()
                .map(|e| {
                    let id = crate::relay::decoded(&e["node"]["id"]);
                    let key = id.rsplit(',').next().unwrap_or_default();
                    json!({"id": key.trim_end_matches(']').trim().parse::<i64>().unwrap_or(-1)})
                })
                .collect();
            match size {
                "first" => seen.extend(ids),
                _ => drop(seen.splice(0..0, ids)),
            }
            if c["pageInfo"][more] == false {
                break;
            }
            cursor = c["pageInfo"][next].clone();
        }
        assert_eq!(Value::from(seen), expected, "{order} by {size}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pages_by_cursor_too() {
    // The list's order with the primary key last, as a connection's is.
    for (order, list_order) in [
        ("{venue_id: desc}", "[{venue_id: desc}, {id: asc}]"),
        (
            "[{venue_id: asc_nulls_first}, {title: desc}]",
            "[{venue_id: asc_nulls_first}, {title: desc}, {id: asc}]",
        ),
        ("{venue: {name: asc}}", "[{venue: {name: asc}}, {id: asc}]"),
    ] {
        sqlite_pages_match(order, list_order).await;
    }
}

#[test]
fn the_cli_prints_the_relay_schema_and_its_sql() {
    let db = crate::common::sqlite_path();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_grafton"))
            .args(args)
            .args(["--database-url", &db.display().to_string()])
            .output()
            .expect("grafton runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let sdl = run(&["schema", "--relay"]);
    assert!(sdl.contains("interface Node") && sdl.contains("type venues implements Node"));
    assert!(sdl.contains("venues_connection(") && !sdl.contains("\n  venues_by_pk("));
    let plain = run(&["schema"]);
    assert!(plain.contains("\n  venues_by_pk(") && !plain.contains("interface Node"));
    let q = "{ venues_connection(first: 2) { edges { cursor node { id } } } }";
    let sql: Value = serde_json::from_str(&run(&["sql", "--relay", "--query", q])).expect("json");
    assert!(
        sql["sql"]
            .as_str()
            .is_some_and(|s| s.contains("grafton_base64(")),
        "{sql}"
    );
}
