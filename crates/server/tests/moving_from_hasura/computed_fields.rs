//! Computed fields (PostgreSQL), from Hasura's table metadata: scalar ones (with and
//! without arguments, with a default, with the session) in selections, `where` and
//! `order_by`; a set-returning one under its table's select permission; the
//! `computed_fields` column permission; an inherited role reading them through its
//! redacting subquery; and the ones Grafton refuses at start-up.

use crate::{metadata, post};
use grafton_server::ServeOptions;
use serde_json::json;

const FIXTURE: &str = include_str!("../fixtures/sql/computed_fields.postgres.sql");

const COMPUTED: &str = r#"computed_fields:
  - name: full_name
    definition: {function: {schema: public, name: author_full_name}}
    comment: First and last name
  - name: post_count
    definition: {function: author_post_count}
  - name: greeting
    definition: {function: author_greeting, table_argument: a}
  - name: posts_like
    definition: {function: author_posts_like}
  - name: is_me
    definition: {function: author_is_me, session_argument: hasura_session}
  - name: own_posts
    definition: {function: author_posts}
  - name: profile
    definition: {function: author_profile}
  - name: posts_titled
    definition: {function: author_posts_titled}
"#;

/// `user` reads names and two computed fields (not `post_count`), and published
/// posts; `team` reads the team column of eng authors; `member` is both; `busy`
/// reads the authors its rule picks by computed fields; `drafter` those with a draft
/// among the posts a set-returning computed field gives.
const PERMISSIONS: &str = r#"select_permissions:
  - role: user
    permission:
      columns: [id, first_name]
      computed_fields: [full_name, is_me]
      filter: {}
  - role: team
    permission:
      columns: [id, team]
      computed_fields: [full_name, is_me]
      filter: {team: {_eq: eng}}
  - role: busy
    permission:
      columns: [id]
      filter: {post_count: {_gt: 1}, full_name: {_ilike: "%a%"}}
  - role: drafter
    permission:
      columns: [id]
      filter: {own_posts: {published: {_eq: false}}}
"#;

const POSTS: &str = r#"table: {name: posts, schema: public}
computed_fields:
  - name: title_length
    definition: {function: post_title_length}
select_permissions:
  - role: user
    permission: {columns: [id, title], filter: {published: {_eq: true}}}
"#;

fn postgres(name: &'static str) -> String {
    let url = grafton_testkit::fresh_database(name);
    grafton_testkit::psql(&url, FIXTURE.as_bytes());
    url
}

/// A server with these table metadata; `name` keeps each test's directory its own.
async fn start(url: &str, name: &str, authors: &str) -> Result<grafton_server::Running, String> {
    let dir = metadata(
        name,
        &[
            ("public_authors.yaml", authors),
            ("public_posts.yaml", POSTS),
        ],
    );
    std::fs::write(
        dir.join("inherited_roles.yaml"),
        "- role_name: member\n  role_set: [user, team]\n",
    )
    .map_err(|e| e.to_string())?;
    grafton_server::start(&ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        config: grafton_schema::hasura::load(&dir)?,
        strict_metadata: true,
        ..ServeOptions::default()
    })
    .await
    .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computed_fields_are_fields_filters_and_sort_keys() {
    let url = postgres("computed_fields");
    let posts = "array_relationships:\n  - name: posts\n    using: {foreign_key_constraint_on: {column: author_id, table: {schema: public, name: posts}}}\n";
    let authors =
        format!("table: {{name: authors, schema: public}}\n{COMPUTED}{posts}{PERMISSIONS}");
    let server = start(&url, "computed-fields", &authors)
        .await
        .expect("server starts");

    let admin = post(
        &server,
        None,
        r#"{
          authors(order_by: {full_name: desc}) {
            id full_name post_count greeting hi: greeting(args: {greeting: "Hi"})
            posts_like(args: {search: "e"}, order_by: {id: asc}) { id }
            posts_titled(args: {titles: "{Engines,Compilers,Letters}"}, order_by: {id: asc}) { id }
          }
          busy: authors(where: {post_count: {_gt: 1}}) { id }
          authors_aggregate { aggregate { sum { post_count } max { full_name post_count } avg { post_count } } }
          named: authors(where: {full_name: {_ilike: "%hop%"}}) { id }
          t: __type(name: "authors") { fields { name description args { name type { name kind ofType { name } } } } }
        }"#,
    )
    .await;
    assert_eq!(
        admin["data"]["authors"],
        json!([
            {"id": 2, "full_name": "Grace Hopper", "post_count": 1, "greeting": "Hello, Grace",
             "hi": "Hi, Grace", "posts_like": [{"id": 4}], "posts_titled": [{"id": 4}]},
            {"id": 1, "full_name": "Ada Lovelace", "post_count": 3, "greeting": "Hello, Ada",
             "hi": "Hi, Ada", "posts_like": [{"id": 1}, {"id": 2}, {"id": 3}],
             "posts_titled": [{"id": 1}, {"id": 3}]}
        ]),
        "{admin}"
    );
    assert_eq!(admin["data"]["busy"], json!([{"id": 1}]), "{admin}");
    assert_eq!(
        admin["data"]["authors_aggregate"]["aggregate"],
        json!({"sum": {"post_count": 4}, "max": {"full_name": "Grace Hopper", "post_count": 3},
               "avg": {"post_count": 2}}),
        "{admin}"
    );
    assert_eq!(admin["data"]["named"], json!([{"id": 2}]), "{admin}");
    let fields = admin["data"]["t"]["fields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let field = |name: &str| fields.iter().find(|f| f["name"] == name).cloned();
    assert_eq!(
        field("full_name").map(|f| f["description"].clone()),
        Some(json!("First and last name"))
    );
    assert_eq!(
        field("greeting").map(|f| f["args"][0].clone()),
        Some(
            json!({"name": "args", "type": {"name": "greeting_authors_args", "kind": "INPUT_OBJECT", "ofType": null}})
        ),
        "{admin}"
    );

    // user: full_name and is_me (the session reaches the function), not post_count;
    // posts_like follows posts' select permission (published only).
    let user = post(
        &server,
        Some("user"),
        r#"{ authors(order_by: {id: asc}) { id full_name is_me posts_like(args: {search: ""}) { id } } }"#,
    )
    .await;
    assert_eq!(
        user["data"]["authors"],
        json!([
            {"id": 1, "full_name": "Ada Lovelace", "is_me": true, "posts_like": [{"id": 1}, {"id": 3}]},
            {"id": 2, "full_name": "Grace Hopper", "is_me": false, "posts_like": [{"id": 4}]}
        ]),
        "{user}"
    );
    // A permission rule on computed fields: authors with more than one post.
    // A json computed field takes a path, as a json column does.
    let profile = post(
        &server,
        None,
        r#"{ authors(order_by: {id: asc}) { team: profile(path: "$.teams[0]") name: profile(path: "name") profile } }"#,
    )
    .await;
    assert_eq!(
        profile["data"]["authors"],
        json!([
            {"team": "eng", "name": "Ada", "profile": {"name": "Ada", "teams": ["eng"]}},
            {"team": "ops", "name": "Grace", "profile": {"name": "Grace", "teams": ["ops"]}}
        ]),
        "{profile}"
    );
    let busy = post(&server, Some("busy"), "{ authors { id } }").await;
    assert_eq!(busy["data"]["authors"], json!([{"id": 1}]), "{busy}");
    // A set-returning computed field in a rule: some post it gives is a draft.
    let drafter = post(&server, Some("drafter"), "{ authors { id } }").await;
    assert_eq!(drafter["data"]["authors"], json!([{"id": 1}]), "{drafter}");
    // Against plain SQL on the same rows.
    let by_sql = grafton_testkit::query_one(
        &url,
        "SELECT string_agg(a.id::text, ',') FROM authors a WHERE EXISTS (SELECT 1 FROM author_posts(a) p WHERE NOT p.published)",
    );
    assert_eq!(by_sql.trim(), "1");
    // A set-returning computed field without arguments filters like an array
    // relationship, under its table's rule: user cannot see the unpublished Notes.
    let by_posts = r#"{ authors(where: {own_posts: {title: {_eq: "Notes"}}}) { id } }"#;
    let admin = post(&server, None, by_posts).await;
    assert_eq!(admin["data"]["authors"], json!([{"id": 1}]), "{admin}");
    let user = post(&server, Some("user"), by_posts).await;
    assert_eq!(user["data"]["authors"], json!([]), "{user}");
    let hidden = post(&server, Some("user"), "{ authors { post_count } }").await;
    assert_eq!(
        hidden["errors"][0]["extensions"]["code"], "validation-failed",
        "{hidden}"
    );
    let unsortable = post(
        &server,
        Some("user"),
        "{ authors(order_by: {post_count: asc}) { id } }",
    )
    .await;
    assert_eq!(
        unsortable["errors"][0]["extensions"]["code"],
        "validation-failed"
    );

    // member reads through the redacting subquery (team is shown only on eng rows):
    // the computed field is still called with the table's own row.
    let member = post(
        &server,
        Some("member"),
        r#"{ authors(order_by: {full_name: asc}, where: {is_me: {_eq: false}}) { id team full_name } }"#,
    )
    .await;
    assert_eq!(
        member["data"]["authors"],
        json!([{"id": 2, "team": null, "full_name": "Grace Hopper"}]),
        "{member}"
    );

    // A set-returning computed field's `_aggregate`, against the same counts in SQL.
    let aggregates = post(
        &server,
        None,
        r#"{ authors(order_by: {id: asc}) {
             own_posts_aggregate { aggregate { count } }
             posts_like_aggregate(args: {search: "e"}, where: {published: {_eq: true}}) {
               aggregate { count max { id } } nodes { id } } } }"#,
    )
    .await;
    let counts: Vec<serde_json::Value> = (aggregates["data"]["authors"].as_array())
        .unwrap_or_else(|| panic!("{aggregates}"))
        .iter()
        .map(|a| a["own_posts_aggregate"]["aggregate"]["count"].clone())
        .collect();
    let by_sql = grafton_testkit::query_one(
        &url,
        "SELECT json_agg((SELECT count(*) FROM author_posts(a)) ORDER BY a.id) FROM authors a",
    );
    let by_sql: serde_json::Value = serde_json::from_str(by_sql.trim()).expect("counts");
    assert_eq!(serde_json::Value::from(counts), by_sql);
    assert_eq!(
        aggregates["data"]["authors"][0]["posts_like_aggregate"],
        json!({"aggregate": {"count": 2, "max": {"id": 3}}, "nodes": [{"id": 1}, {"id": 3}]}),
        "{aggregates}"
    );
    // Its count and aggregates are sort keys, as Hasura's.
    for (order, expected) in [
        (
            "{own_posts_aggregate: {count: asc}}",
            json!([{"id": 2}, {"id": 1}]),
        ),
        (
            "{own_posts_aggregate: {max: {id: desc}}}",
            json!([{"id": 2}, {"id": 1}]),
        ),
    ] {
        let q = format!("{{ authors(order_by: {order}) {{ id }} }}");
        let v = post(&server, None, &q).await;
        assert_eq!(v["data"]["authors"], expected, "{order}: {v}");
    }
    // A relationship's aggregate of a computed field is a sort key (Ada's longest
    // title is 7 letters, Grace's 9).
    let v = post(
        &server,
        None,
        "{ authors(order_by: {posts_aggregate: {max: {title_length: desc}}}) { id } }",
    )
    .await;
    assert_eq!(v["data"]["authors"], json!([{"id": 2}, {"id": 1}]), "{v}");
    // Where the role may not aggregate the rows (user's posts), there is none.
    let user = post(
        &server,
        Some("user"),
        "{ authors { own_posts_aggregate { aggregate { count } } } }",
    )
    .await;
    assert_eq!(
        user["errors"][0]["extensions"]["code"], "validation-failed",
        "{user}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn computed_fields_that_cannot_be_served_stop_start_up_named() {
    let url = postgres("computed_fields_refused");
    let cases = [
        (
            "computed_fields:\n  - {name: touch, definition: {function: author_touch}}\n",
            "computed field 'touch' on authors: function public.author_touch is VOLATILE",
        ),
        (
            "computed_fields:\n  - {name: title, definition: {function: post_title}}\n",
            "its table argument must be of the row type public.authors",
        ),
        (
            "computed_fields:\n  - {name: first_name, definition: {function: author_full_name}}\n",
            "a column or relationship has that name",
        ),
        (
            "select_permissions:\n  - {role: user, permission: {columns: [id], computed_fields: [nope]}}\n",
            "'nope' is not a scalar computed field",
        ),
        (
            "computed_fields:\n  - {name: posts_like, definition: {function: author_posts_like}}\n\
             select_permissions:\n  - {role: user, permission: {columns: [id], filter: {posts_like: {_eq: 1}}}}\n",
            "computed field 'posts_like' takes arguments, which a rule cannot pass",
        ),
    ];
    for (i, (extra, expected)) in cases.into_iter().enumerate() {
        let authors = format!("table: {{name: authors, schema: public}}\n{extra}");
        match start(&url, &format!("computed-fields-refused-{i}"), &authors).await {
            Err(e) => assert!(e.contains(expected), "{extra}: {e}"),
            Ok(_) => panic!("{extra}: started"),
        }
    }
}
