//! Tracked SQL functions (PostgreSQL), from Hasura's `functions/` metadata: query
//! functions with their `_aggregate`, arguments with defaults, unnamed arguments and
//! several types, a session argument, a single-row function, a `VOLATILE` function
//! as a mutation, the returned table's row filter, function permissions, and the
//! functions Grafton refuses at start-up.

use crate::{metadata, next_data, post, subscribe};
use grafton_server::{Running, ServeOptions};
use serde_json::json;
use std::path::Path;

const FIXTURE: &str = "
CREATE TABLE authors (id INTEGER NOT NULL PRIMARY KEY, full_name TEXT NOT NULL);
CREATE TABLE posts (
  id INTEGER NOT NULL PRIMARY KEY,
  author_id INTEGER NOT NULL REFERENCES authors (id),
  title TEXT NOT NULL,
  published BOOLEAN NOT NULL,
  score NUMERIC NOT NULL
);
INSERT INTO authors VALUES (1, 'Ada'), (2, 'Grace');
INSERT INTO posts VALUES
  (1, 1, 'Engines', true, 5), (2, 1, 'Notes on engines', false, 9),
  (3, 2, 'Compilers', true, 7), (4, 2, 'Draft', false, 1);
CREATE FUNCTION search_posts(search text, min_score numeric DEFAULT 0)
  RETURNS SETOF posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE title ILIKE '%' || search || '%' AND score >= min_score $$;
CREATE FUNCTION my_posts(hasura_session json)
  RETURNS SETOF posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE author_id = (hasura_session ->> 'x-hasura-user-id')::int $$;
CREATE FUNCTION posts_between(integer, integer DEFAULT 100)
  RETURNS SETOF posts IMMUTABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE id BETWEEN $1 AND $2 $$;
CREATE FUNCTION latest_post() RETURNS posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts ORDER BY id DESC LIMIT 1 $$;
CREATE FUNCTION publish_all(author integer) RETURNS SETOF posts VOLATILE LANGUAGE sql
  AS $$ UPDATE posts SET published = true WHERE author_id = author RETURNING * $$;
CREATE FUNCTION tagged(tags text[]) RETURNS SETOF posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE title = ANY (tags) $$;
CREATE FUNCTION posts_by_uuid(ids uuid[]) RETURNS SETOF posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE ('00000000-0000-0000-0000-00000000000' || id)::uuid = ANY (ids) $$;
CREATE TYPE pair AS (a integer, b integer);
CREATE FUNCTION by_pair(p pair) RETURNS SETOF posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE id BETWEEN p.a AND p.b $$;
CREATE FUNCTION posts_of(author_row authors, min_score numeric DEFAULT 0)
  RETURNS SETOF posts STABLE LANGUAGE sql
  AS $$ SELECT * FROM posts WHERE author_id = author_row.id AND score >= min_score $$;
CREATE FUNCTION by_words(words tsvector) RETURNS SETOF posts STABLE LANGUAGE sql AS $$ SELECT * FROM posts $$;
CREATE FUNCTION twice(a integer) RETURNS SETOF posts STABLE LANGUAGE sql AS $$ SELECT * FROM posts $$;
CREATE FUNCTION twice(a text) RETURNS SETOF posts STABLE LANGUAGE sql AS $$ SELECT * FROM posts $$;
";

/// `user` reads published posts (and may aggregate them); `guest` reads them too
/// but may not call `publish_all`.
const POSTS: &str = r#"table: {name: posts, schema: public}
select_permissions:
  - role: user
    permission:
      columns: [id, title, author_id, published]
      filter: {published: {_eq: true}}
      allow_aggregations: true
  - role: guest
    permission:
      columns: [id, title]
      filter: {published: {_eq: true}}
"#;

const FUNCTIONS: &[(&str, &str)] = &[
    (
        "public_search_posts.yaml",
        "function: {schema: public, name: search_posts}\n",
    ),
    (
        "public_my_posts.yaml",
        "function: {schema: public, name: my_posts}\nconfiguration: {session_argument: hasura_session}\n",
    ),
    (
        "public_posts_between.yaml",
        "function: {schema: public, name: posts_between}\nconfiguration: {custom_name: between}\n",
    ),
    ("public_latest_post.yaml", "function: latest_post\n"),
    (
        "public_publish_all.yaml",
        "function: {schema: public, name: publish_all}\npermissions: [{role: user}]\n",
    ),
];

/// A metadata directory with the posts table and these function files.
fn with_functions(name: &str, functions: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = metadata(name, &[("public_posts.yaml", POSTS)]);
    let fdir = dir.join("databases/default/functions");
    std::fs::create_dir_all(&fdir).expect("functions dir");
    let list: String = (functions.iter())
        .map(|(f, _)| format!("- \"!include {f}\"\n"))
        .collect();
    std::fs::write(fdir.join("functions.yaml"), list).expect("functions.yaml");
    for (file, text) in functions {
        std::fs::write(fdir.join(file), text).expect("function file");
    }
    dir
}

async fn start(url: &str, dir: &Path, infer: Option<bool>) -> Result<Running, String> {
    grafton_server::start(&ServeOptions {
        database_url: url.to_owned(),
        port: 0,
        config: grafton_schema::hasura::load(dir)?,
        infer_function_permissions: infer,
        strict_metadata: true,
        ..ServeOptions::default()
    })
    .await
    .map_err(|e| e.to_string())
}

fn postgres(name: &'static str) -> String {
    let url = grafton_testkit::fresh_database(name);
    grafton_testkit::psql(&url, FIXTURE.as_bytes());
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracked_functions_are_root_fields_under_the_tables_rules() {
    let url = postgres("functions");
    let dir = with_functions("functions", FUNCTIONS);
    let server = start(&url, &dir, None).await.expect("server starts");

    let admin = post(
        &server,
        None,
        r#"{
          all: search_posts(args: {search: "engine"}, order_by: {id: asc}) { id }
          good: search_posts(args: {search: "e", min_score: 6}, order_by: {id: asc}) { id }
          n: search_posts_aggregate(args: {search: "e"}) { aggregate { count } }
          between(args: {arg_1: 2, arg_2: 3}, order_by: {id: asc}) { id }
          from3: between(args: {arg_1: 3}, order_by: {id: asc}) { id }
          latest_post { id title }
          kept: latest_post(where: {id: {_gt: 3}}) { id }
          filtered: latest_post(where: {id: {_lt: 3}}) { id }
          none: latest_post(limit: 0) { id }
          t: __type(name: "search_posts_args") { inputFields { name type { kind name } } }
        }"#,
    )
    .await;
    let d = &admin["data"];
    assert_eq!(d["all"], json!([{"id": 1}, {"id": 2}]), "{admin}");
    assert_eq!(d["good"], json!([{"id": 2}, {"id": 3}]), "{admin}");
    assert_eq!(d["n"], json!({"aggregate": {"count": 3}}), "{admin}");
    assert_eq!(d["between"], json!([{"id": 2}, {"id": 3}]), "{admin}");
    assert_eq!(d["from3"], json!([{"id": 3}, {"id": 4}]), "{admin}");
    assert_eq!(
        d["latest_post"],
        json!({"id": 4, "title": "Draft"}),
        "{admin}"
    );
    // A function returning one row takes the list arguments, as Hasura's: a
    // `where` its row fails, or `limit: 0`, answers null.
    assert_eq!(
        (&d["kept"], &d["filtered"], &d["none"]),
        (&json!({"id": 4}), &json!(null), &json!(null)),
        "{admin}"
    );
    assert_eq!(
        d["t"]["inputFields"],
        json!([
            {"name": "search", "type": {"kind": "SCALAR", "name": "String"}},
            {"name": "min_score", "type": {"kind": "SCALAR", "name": "numeric"}}
        ]),
        "{admin}"
    );

    // The returned table's row filter applies: user sees only published posts,
    // through the function, its aggregate and the session-argument function.
    let user = post(
        &server,
        Some("user"),
        r#"{
          search_posts(args: {search: "e"}, order_by: {id: asc}) { id }
          search_posts_aggregate(args: {search: "e"}) { aggregate { count } }
          my_posts(order_by: {id: asc}) { id author_id }
        }"#,
    )
    .await;
    assert_eq!(
        user["data"]["search_posts"],
        json!([{"id": 1}, {"id": 3}]),
        "{user}"
    );
    assert_eq!(
        user["data"]["search_posts_aggregate"],
        json!({"aggregate": {"count": 2}}),
        "{user}"
    );
    // x-hasura-user-id 1 reaches the function as JSON: Ada's published post.
    assert_eq!(
        user["data"]["my_posts"],
        json!([{"id": 1, "author_id": 1}]),
        "{user}"
    );

    // An argument without a default must be given; one that is not an argument is refused.
    for (query, expected) in [
        ("{ search_posts { id } }", "search_posts(args:)"),
        (
            "{ search_posts(args: {min_score: 1}) { id } }",
            "missing argument 'search'",
        ),
        (
            r#"{ search_posts(args: {search: "x", limit: 1}) { id } }"#,
            "limit",
        ),
    ] {
        let body = post(&server, None, query).await;
        let message = body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{query}: {body}");
        assert_eq!(body["errors"][0]["extensions"]["code"], "validation-failed");
    }

    // guest may read posts but has no aggregations; it has no publish_all (mutation
    // functions need a function permission).
    let guest = post(
        &server,
        Some("guest"),
        "{ __schema { queryType { fields { name } } mutationType { name } } }",
    )
    .await;
    let fields = guest["data"]["__schema"]["queryType"]["fields"].to_string();
    assert!(fields.contains("\"search_posts\""), "{guest}");
    assert!(!fields.contains("search_posts_aggregate"), "{guest}");
    assert_eq!(
        guest["data"]["__schema"]["mutationType"],
        json!(null),
        "{guest}"
    );

    // A VOLATILE function is a mutation; its rows are read under the role's filter
    // after it ran, in the same transaction.
    let published = post(
        &server,
        Some("user"),
        "mutation { publish_all(args: {author: 2}, order_by: {id: asc}) { id published } }",
    )
    .await;
    assert_eq!(
        published["data"]["publish_all"],
        json!([{"id": 3, "published": true}, {"id": 4, "published": true}]),
        "{published}"
    );
    let after = post(
        &server,
        Some("user"),
        "{ posts(where: {author_id: {_eq: 2}}) { id } }",
    )
    .await;
    assert_eq!(
        after["data"]["posts"].as_array().map(Vec::len),
        Some(2),
        "{after}"
    );
    // The session function as a subscription: the session reaches each poll, and a
    // mutation function's write wakes it (it wrote the table it returns).
    let user = json!({"x-hasura-role": "user", "x-hasura-user-id": "1"});
    let mut ws = subscribe(
        &server,
        user,
        "subscription { my_posts(order_by: {id: asc}) { id } }",
    )
    .await;
    assert_eq!(next_data(&mut ws).await, json!({"my_posts": [{"id": 1}]}));
    post(
        &server,
        Some("user"),
        "mutation { publish_all(args: {author: 1}) { id } }",
    )
    .await;
    assert_eq!(
        next_data(&mut ws).await,
        json!({"my_posts": [{"id": 1}, {"id": 2}]})
    );
    server.stop().await;

    // With function permissions not inferred, a query function needs one too.
    let strict = start(&url, &dir, Some(false)).await.expect("server starts");
    let guest = post(
        &strict,
        Some("guest"),
        r#"{ search_posts(args: {search: "e"}) { id } }"#,
    )
    .await;
    assert_eq!(
        guest["errors"][0]["extensions"]["code"], "validation-failed",
        "{guest}"
    );
    strict.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_that_cannot_be_served_stop_start_up_named() {
    let url = postgres("functions_refused");
    let cases: &[(&str, &str, &str)] = &[
        (
            "unmapped-argument",
            "function: by_words\n",
            "function public.by_words: argument 'words' has type tsvector",
        ),
        (
            "overloaded",
            "function: twice\n",
            "function public.twice cannot be tracked: it is overloaded",
        ),
        (
            "unknown",
            "function: nothing_here\n",
            "function 'nothing_here': no function public.nothing_here",
        ),
        (
            "not-volatile",
            "function: search_posts\nconfiguration: {exposed_as: mutation}\n",
            "is exposed_as: mutation but is not VOLATILE",
        ),
        (
            "session-not-json",
            "function: search_posts\nconfiguration: {session_argument: search}\n",
            "session_argument 'search' has type text, not json",
        ),
    ];
    for (name, file, expected) in cases {
        let dir = with_functions(name, &[("f.yaml", file)]);
        match start(&url, &dir, None).await {
            Err(e) => assert!(e.contains(expected), "{name}: {e}"),
            Ok(_) => panic!("{name}: started"),
        }
    }
    // SQLite has no SQL functions: tracking one is refused, never ignored.
    let sqlite = grafton_testkit::sqlite_path("functions_sqlite");
    rusqlite::Connection::open(&sqlite)
        .and_then(|c| {
            c.execute_batch(
                "CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER, title TEXT, \
             published BOOLEAN);",
            )
        })
        .expect("SQLite file");
    let dir = with_functions(
        "functions-sqlite",
        &[("f.yaml", "function: search_posts\n")],
    );
    match start(&sqlite.display().to_string(), &dir, None).await {
        Err(e) => assert!(e.contains("tracked functions need PostgreSQL"), "{e}"),
        Ok(_) => panic!("SQLite started with a tracked function"),
    }
}

/// An array argument is Hasura's scalar named after the array type (`_text` for
/// `text[]`, `_uuid` for `uuid[]`) and takes a PostgreSQL array literal, as a
/// literal or a variable; what PostgreSQL cannot read as one is a data error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_arguments_take_a_postgres_array_literal() {
    let url = postgres("functions_arrays");
    let dir = with_functions(
        "functions-arrays",
        &[
            ("public_tagged.yaml", "function: tagged\n"),
            ("public_posts_by_uuid.yaml", "function: posts_by_uuid\n"),
        ],
    );
    let server = start(&url, &dir, None).await.expect("server starts");
    let types = post(
        &server,
        None,
        r#"{ tagged: __type(name: "tagged_args") { inputFields { name type { name } } }
             uuids: __type(name: "posts_by_uuid_args") { inputFields { name type { name } } } }"#,
    )
    .await;
    assert_eq!(
        types["data"],
        json!({"tagged": {"inputFields": [{"name": "tags", "type": {"name": "_text"}}]},
               "uuids": {"inputFields": [{"name": "ids", "type": {"name": "_uuid"}}]}}),
        "{types}"
    );
    let body = post(
        &server,
        None,
        r#"{ tagged(args: {tags: "{Engines,Compilers}"}, order_by: {id: asc}) { id } }"#,
    )
    .await;
    assert_eq!(
        body["data"],
        json!({"tagged": [{"id": 1}, {"id": 3}]}),
        "{body}"
    );
    let body = crate::post_body(
        &server,
        &json!({
            "query": "query($t: _text) { tagged(args: {tags: $t}) { id } }",
            "variables": {"t": "{\"Notes on engines\"}"}
        }),
        &[],
    )
    .await;
    assert_eq!(body["data"], json!({"tagged": [{"id": 2}]}), "{body}");
    let body = post(
        &server,
        None,
        r#"{ posts_by_uuid(args: {ids: "{00000000-0000-0000-0000-000000000004}"}) { id } }"#,
    )
    .await;
    assert_eq!(
        body["data"],
        json!({"posts_by_uuid": [{"id": 4}]}),
        "{body}"
    );
    let body = post(
        &server,
        None,
        r#"{ posts_by_uuid(args: {ids: "not an array"}) { id } }"#,
    )
    .await;
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "data-exception",
        "{body}"
    );
    server.stop().await;
}

/// A row-type argument (`author_row authors`, Hasura's issue 3757) is Hasura's
/// scalar `<type>_scalar` and takes a PostgreSQL row literal, as a literal or a
/// variable, for a table's row type and a composite type alike; the returned
/// table's rules still apply; what PostgreSQL cannot read as a row is a data error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_type_arguments_take_a_postgres_row_literal() {
    let url = postgres("functions_rows");
    let dir = with_functions(
        "functions-rows",
        &[
            ("public_posts_of.yaml", "function: posts_of\n"),
            ("public_by_pair.yaml", "function: by_pair\n"),
        ],
    );
    let server = start(&url, &dir, None).await.expect("server starts");
    let types = post(
        &server,
        None,
        r#"{ of: __type(name: "posts_of_args") { inputFields { name type { name kind } } }
             pair: __type(name: "by_pair_args") { inputFields { name type { name kind } } } }"#,
    )
    .await;
    assert_eq!(
        types["data"],
        json!({"of": {"inputFields": [
                  {"name": "author_row", "type": {"name": "authors_scalar", "kind": "SCALAR"}},
                  {"name": "min_score", "type": {"name": "numeric", "kind": "SCALAR"}}]},
               "pair": {"inputFields": [
                  {"name": "p", "type": {"name": "pair_scalar", "kind": "SCALAR"}}]}}),
        "{types}"
    );
    let body = post(
        &server,
        None,
        r#"{ posts_of(args: {author_row: "(2,Grace)"}, order_by: {id: asc}) { id }
             high: posts_of(args: {author_row: "(1,\"Ada\")", min_score: 6}) { id }
             by_pair(args: {p: "(2,3)"}, order_by: {id: asc}) { id } }"#,
    )
    .await;
    assert_eq!(
        body["data"],
        json!({"posts_of": [{"id": 3}, {"id": 4}], "high": [{"id": 2}],
               "by_pair": [{"id": 2}, {"id": 3}]}),
        "{body}"
    );
    let body = crate::post_body(
        &server,
        &json!({
            "query": "query($a: authors_scalar!) { posts_of(args: {author_row: $a}) { id title } }",
            "variables": {"a": "(1,Ada)"}
        }),
        &[("x-hasura-role", "user")],
    )
    .await;
    // `user` reads published posts only: the function's rows pass the rule.
    assert_eq!(
        body["data"],
        json!({"posts_of": [{"id": 1, "title": "Engines"}]}),
        "{body}"
    );
    let body = post(
        &server,
        None,
        r#"{ posts_of(args: {author_row: "not a row"}) { id } }"#,
    )
    .await;
    assert_eq!(
        body["errors"][0]["extensions"]["code"], "data-exception",
        "{body}"
    );
    server.stop().await;
}
