//! Remote schemas (issue 33): another GraphQL service's root fields served
//! beside the database's. The remote here is a second Grafton, on its own
//! database, on 127.0.0.1; every call it gets is counted at a relay in front of
//! it, which also records the headers.

use crate::{databases_with, metadata, post_body, serve};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// What the remote serves: books (on SQLite).
pub(crate) const REMOTE_SQL: &str = "
CREATE TABLE books (id INTEGER NOT NULL PRIMARY KEY, title TEXT NOT NULL, pages INTEGER);
INSERT INTO books VALUES (1, 'Dune', 412), (2, 'Emma', 474);
";

/// What the server in front serves: notes.
const LOCAL_SQL: &str = "
CREATE TABLE notes (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL);
INSERT INTO notes VALUES (1, 'hello');
";

/// A relay on 127.0.0.1 in front of `target`: each call's headers and body
/// recorded, then passed on (the remote's own answer sent back).
#[derive(Clone, Default)]
pub(crate) struct Relay {
    calls: Arc<Mutex<Vec<(axum::http::HeaderMap, Value)>>>,
}

impl Relay {
    pub(crate) async fn start(&self, target: String) -> String {
        async fn pass(
            axum::extract::State((relay, target)): axum::extract::State<(Relay, String)>,
            headers: axum::http::HeaderMap,
            body: axum::Json<Value>,
        ) -> axum::Json<Value> {
            relay
                .calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((headers, body.0.clone()));
            let answer = reqwest::Client::new()
                .post(&target)
                .json(&body.0)
                .send()
                .await;
            let answer = answer.expect("the remote answers");
            axum::Json(answer.json().await.expect("json"))
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = axum::Router::new()
            .route("/graphql", axum::routing::post(pass))
            .with_state((self.clone(), target));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}/graphql")
    }

    /// The calls made with a document that is not the introspection query.
    pub(crate) fn calls(&self) -> Vec<(axum::http::HeaderMap, Value)> {
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        (calls.iter())
            .filter(|(_, b)| b["operationName"] != json!("IntrospectionQuery"))
            .cloned()
            .collect()
    }
}

fn remote_yaml(env: &str, customization: &str) -> String {
    format!(
        "- name: library\n  definition:\n    url: \"{{{{{env}}}}}\"\n    timeout_seconds: 5\n    \
         headers:\n      - name: x-library-key\n        value: k3y\n{customization}"
    )
}

/// The remote's books, readable by its role `user` too (the session's role is
/// sent on).
const BOOKS: &str = "table: {name: books, schema: public}
select_permissions:
  - role: user
    permission: {columns: [id, title, pages], filter: {}}
";

/// A Grafton serving the books on SQLite: the remote.
pub(crate) async fn books_remote(name: &'static str) -> grafton_server::Running {
    let [db, _] = databases_with(name, REMOTE_SQL);
    let dir = metadata(&name.replace('_', "-"), &[("public_books.yaml", BOOKS)]);
    serve(&db, &dir).await
}

/// The project in front, with the remote schema.
fn project(name: &str, env: &str, customization: &str) -> std::path::PathBuf {
    let dir = metadata(
        name,
        &[("public_notes.yaml", "table: {name: notes, schema: public}")],
    );
    std::fs::write(
        dir.join("remote_schemas.yaml"),
        remote_yaml(env, customization),
    )
    .expect("remote_schemas.yaml");
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_schemas_root_fields_are_served_beside_the_tables() {
    let remote_dir = metadata(
        "remote-schemas-remote",
        &[("public_books.yaml", "table: {name: books, schema: public}")],
    );
    let env = "GRAFTON_TEST_REMOTE_SCHEMA_URL";
    let dir = project("remote-schemas", env, "");
    // The remote on the same backend as the server (a Grafton on PostgreSQL
    // and one on SQLite define `String_comparison_exp` apart: they would clash).
    let remotes = databases_with("remote_schemas_remote", REMOTE_SQL);
    let locals = databases_with("remote_schemas_local", LOCAL_SQL);
    for (remote_db, db) in remotes.into_iter().zip(locals) {
        let remote = serve(&remote_db, &remote_dir).await;
        let relay = Relay::default();
        std::env::set_var(env, relay.start(remote.url()).await);
        let server = serve(&db, &dir).await;
        let query = json!({"query": "query ($n: Int!) {
            notes { body }
            books(order_by: {id: asc}, limit: $n) { title ...Size }
            first: books_by_pk(id: 1) { __typename title }
          }
          fragment Size on books { pages }", "variables": {"n": 1}});
        let before = relay.calls().len();
        let answer = post_body(&server, &query, &[]).await;
        assert_eq!(
            answer,
            json!({"data": {
                "notes": [{"body": "hello"}],
                "books": [{"title": "Dune", "pages": 412}],
                "first": {"__typename": "books", "title": "Dune"}}})
        );
        // One call for both of the remote's fields; its headers, and only the
        // variables it uses.
        let calls = relay.calls();
        assert_eq!(calls.len(), before + 1, "{calls:?}");
        let (headers, body) = &calls[before];
        assert_eq!(headers["x-library-key"], "k3y");
        assert_eq!(headers["x-hasura-role"], "admin");
        assert_eq!(body["variables"], json!({"n": 1}));
        // A role sees the remote too (Hasura's default), its session sent on as
        // headers (this remote, with no admin secret, answers every role).
        let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "7")];
        let query = json!({"query": "{ books_by_pk(id: 2) { title } }"});
        let answer = post_body(&server, &query, &user).await;
        assert_eq!(answer, json!({"data": {"books_by_pk": {"title": "Emma"}}}));
        let calls = relay.calls();
        let (headers, _) = calls.last().expect("a call");
        assert_eq!(headers["x-hasura-role"], "user");
        assert_eq!(headers["x-hasura-user-id"], "7");
        // A non-null remote field that fails makes the whole data null.
        let bad = json!({"query": "{ notes { body } books(limit: -1) { title } }"});
        let answer = post_body(&server, &bad, &[]).await;
        assert_eq!(answer["data"], Value::Null, "{answer}");
        assert!(answer["errors"][0]["message"].is_string(), "{answer}");
        server.stop().await;
        remote.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_that_is_down_is_left_out_at_start_and_an_error_later() {
    // Nothing listens on this port: the remote is left out, the rest served.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/graphql", closed.local_addr().expect("addr"));
    drop(closed);
    let env = "GRAFTON_TEST_REMOTE_SCHEMA_DOWN";
    std::env::set_var(env, &url);
    let dir = project("remote-schemas-down", env, "");
    let [db, _] = databases_with("remote_schemas_down", LOCAL_SQL);
    let server = serve(&db, &dir).await;
    let answer = post_body(&server, &json!({"query": "{ notes { body } }"}), &[]).await;
    assert_eq!(answer, json!({"data": {"notes": [{"body": "hello"}]}}));
    let admin = reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .json(&json!({"type": "get_inconsistent_metadata", "args": {}}))
        .send()
        .await
        .expect("answer");
    let report: Value = admin.json().await.expect("json");
    let objects = report["inconsistent_objects"].as_array().expect("a list");
    assert!(
        objects
            .iter()
            .any(|o| o["type"] == "remote_schema" && o["name"] == "remote schema 'library'"),
        "{report}"
    );
    server.stop().await;

    // Up at start, down later: its fields are null with a clear error, the
    // rest answered.
    let remote = books_remote("remote_schemas_later").await;
    std::env::set_var(env, remote.url());
    let server = serve(&db, &dir).await;
    remote.stop().await;
    let query = json!({"query": "{ notes { body } books_by_pk(id: 1) { title } }"});
    let answer = post_body(&server, &query, &[]).await;
    assert_eq!(
        answer["data"]["notes"],
        json!([{"body": "hello"}]),
        "{answer}"
    );
    assert_eq!(answer["data"]["books_by_pk"], Value::Null, "{answer}");
    assert_eq!(
        answer["errors"][0]["extensions"]["code"],
        json!("remote-schema-error"),
        "{answer}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customized_remote_is_served_under_its_names() {
    let remote = books_remote("remote_schemas_custom_remote").await;
    let env = "GRAFTON_TEST_REMOTE_SCHEMA_CUSTOM";
    std::env::set_var(env, remote.url());
    let customization = "    customization:\n      type_names:\n        prefix: lib_\n        \
         mapping: {books: Book}\n      field_names:\n        - parent_type: query_root\n          \
         prefix: lib_\n        - parent_type: books\n          mapping: {title: name}\n";
    let dir = project("remote-schemas-custom", env, customization);
    let [db, _] = databases_with("remote_schemas_custom", LOCAL_SQL);
    let server = serve(&db, &dir).await;
    let query = json!({"query": "query ($w: lib_books_bool_exp) {
        lib_books(where: $w, order_by: {id: desc}) { __typename name ... on Book { pages } }
      }", "variables": {"w": {"pages": {"_gt": 400}}}});
    let answer = post_body(&server, &query, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"lib_books": [
            {"__typename": "Book", "name": "Emma", "pages": 474},
            {"__typename": "Book", "name": "Dune", "pages": 412}]}})
    );
    // The remote's own names are gone from the schema.
    let types = json!({"query": "{ a: __type(name: \"books\") { name } b: __type(name: \"Book\") { name } }"});
    let answer = post_body(&server, &types, &[]).await;
    assert_eq!(answer, json!({"data": {"a": null, "b": {"name": "Book"}}}));
    server.stop().await;
    remote.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_api_adds_reloads_introspects_and_removes_a_remote() {
    const SECRET: &str = "remote-secret";
    let remote = books_remote("remote_schemas_api_remote").await;
    let [db, _] = databases_with("remote_schemas_api", LOCAL_SQL);
    let server = crate::store_server(db, SECRET).await;
    let api = |body: Value| crate::metadata_api(&server, SECRET, body);
    let admin = [("x-hasura-admin-secret", SECRET)];
    let books = json!({"query": "{ books_by_pk(id: 1) { title } }"});
    let definition = json!({"url": remote.url(), "timeout_seconds": 5});
    let add = json!({"type": "add_remote_schema",
        "args": {"name": "library", "definition": definition, "comment": "books"}});
    assert_eq!(api(add.clone()).await, (200, json!({"message": "success"})));
    let answer = post_body(&server, &books, &admin).await;
    assert_eq!(answer, json!({"data": {"books_by_pk": {"title": "Dune"}}}));
    let (status, again) = api(add).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (400, Some("already-exists")),
        "{again}"
    );
    // A role's part: a bad one refused, a good one served.
    let permit = |sdl: &str| {
        json!({"type": "add_remote_schema_permissions", "args": {"remote_schema": "library",
            "role": "user", "definition": {"schema": sdl}}})
    };
    let (status, refused) = api(permit("type Query { nope: Int }")).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("validation-failed")),
        "{refused}"
    );
    let part = "type Query { books_by_pk(id: Int!): books } type books { title: String! }";
    assert_eq!(
        api(permit(part)).await,
        (200, json!({"message": "success"}))
    );
    let user = [("x-hasura-admin-secret", SECRET), ("x-hasura-role", "user")];
    assert_eq!(
        post_body(&server, &books, &user).await,
        json!({"data": {"books_by_pk": {"title": "Dune"}}})
    );
    let pages = json!({"query": "{ books_by_pk(id: 1) { pages } }"});
    let answer = post_body(&server, &pages, &user).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"],
        json!("validation-failed"),
        "{answer}"
    );
    let forbid = json!({"type": "drop_remote_schema_permissions",
        "args": {"remote_schema": "library", "role": "user"}});
    assert_eq!(
        api(forbid.clone()).await,
        (200, json!({"message": "success"}))
    );
    let (status, refused) = api(forbid).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("not-exists")),
        "{refused}"
    );
    // Its introspection as the remote answered it.
    let introspect = json!({"type": "introspect_remote_schema", "args": {"name": "library"}});
    let (status, raw) = api(introspect).await;
    assert_eq!(status, 200);
    assert!(raw["data"]["__schema"]["types"].is_array(), "{raw}");
    // A remote that cannot be reached is refused, and nothing changes.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let nowhere = format!("http://{}/graphql", closed.local_addr().expect("addr"));
    drop(closed);
    let update = json!({"type": "update_remote_schema",
        "args": {"name": "library", "definition": {"url": nowhere}}});
    let (status, refused) = api(update).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("remote-schema-error")),
        "{refused}"
    );
    assert_eq!(
        post_body(&server, &books, &admin).await,
        json!({"data": {"books_by_pk": {"title": "Dune"}}})
    );
    // A reload reads the remote again; an unknown name is refused.
    let reload = json!({"type": "reload_remote_schema", "args": {"name": "library"}});
    assert_eq!(api(reload).await, (200, json!({"message": "success"})));
    let unknown = json!({"type": "reload_remote_schema", "args": {"name": "nope"}});
    let (status, refused) = api(unknown).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("not-exists")),
        "{refused}"
    );
    let remove = json!({"type": "remove_remote_schema", "args": {"name": "library"}});
    assert_eq!(
        api(remove.clone()).await,
        (200, json!({"message": "success"}))
    );
    let gone = post_body(&server, &books, &admin).await;
    assert_eq!(
        gone["errors"][0]["extensions"]["code"],
        json!("validation-failed"),
        "{gone}"
    );
    let (status, refused) = api(remove).await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("not-exists")),
        "{refused}"
    );
    server.stop().await;
    remote.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_sees_its_part_of_a_remote_with_presets_and_one_sent_cookies_is_not_run_over_get() {
    let remote = books_remote("remote_schemas_guarded_remote").await;
    let env = "GRAFTON_TEST_REMOTE_SCHEMA_GUARDED";
    std::env::set_var(env, remote.url());
    // `user` sees two fields, each with a preset: a literal, and its session's.
    let permissions = r#"  permissions:
    - role: user
      definition:
        schema: |
          type Query {
            books(limit: Int @preset(value: 1)): [books!]!
            books_by_pk(id: Int! @preset(value: "x-hasura-user-id")): books
          }
          type books { id: Int! title: String! }
"#;
    let dir = project("remote-schemas-guarded", env, permissions);
    let [db, _] = databases_with("remote_schemas_guarded", LOCAL_SQL);
    let server = serve(&db, &dir).await;
    let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "2")];
    let query = json!({"query": "{ books { title } books_by_pk { id title } }"});
    let answer = post_body(&server, &query, &user).await;
    assert_eq!(
        answer,
        json!({"data": {"books": [{"title": "Dune"}], "books_by_pk": {"id": 2, "title": "Emma"}}})
    );
    // A preset cannot be overridden: the argument is not in the role's schema;
    // nor is what the SDL leaves out.
    for refused in [
        "{ books(limit: 5) { title } }",
        "{ books { pages } }",
        "{ books_aggregate { aggregate { count } } }",
    ] {
        let answer = post_body(&server, &json!({"query": refused}), &user).await;
        let code = &answer["errors"][0]["extensions"]["code"];
        assert_eq!(code, &json!("validation-failed"), "{refused}: {answer}");
    }
    // Without its session variable the call is not made.
    let anonymous = [("x-hasura-role", "user")];
    let by_pk = json!({"query": "{ books_by_pk { title } }"});
    let answer = post_body(&server, &by_pk, &anonymous).await;
    let message = answer["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("x-hasura-user-id"), "{answer}");
    // Admin sees it whole; a role without a permission, none of it.
    let whole = json!({"query": "{ books_aggregate { aggregate { count } } }"});
    let answer = post_body(&server, &whole, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"books_aggregate": {"aggregate": {"count": 2}}}})
    );
    let other = [("x-hasura-role", "reader")];
    let answer = post_body(&server, &json!({"query": "{ books { title } }"}), &other).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"],
        json!("validation-failed"),
        "{answer}"
    );
    server.stop().await;
    // A remote sent the client's headers (its cookies) is not reached over GET.
    let forwarding = "    forward_client_headers: true\n";
    let yaml = remote_yaml(env, "").replace(
        "    timeout_seconds: 5\n",
        &format!("    timeout_seconds: 5\n{forwarding}"),
    );
    std::fs::write(dir.join("remote_schemas.yaml"), yaml).expect("remote_schemas.yaml");
    let server = serve(&db, &dir).await;
    let get = reqwest::Client::new()
        .get(server.url())
        .query(&[("query", "{ books { title } }")])
        .send()
        .await
        .expect("answer");
    assert_eq!(get.status().as_u16(), 405);
    let answer = post_body(
        &server,
        &json!({"query": "{ books(limit: 1) { title } }"}),
        &[],
    )
    .await;
    assert_eq!(answer, json!({"data": {"books": [{"title": "Dune"}]}}));
    server.stop().await;
    remote.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_remote_is_one_field_on_each_root() {
    let remote = books_remote("remote_schemas_namespace_remote").await;
    let env = "GRAFTON_TEST_REMOTE_SCHEMA_NAMESPACE";
    std::env::set_var(env, remote.url());
    let customization = "    customization:\n      root_fields_namespace: lib\n";
    let dir = project("remote-schemas-namespace", env, customization);
    let [db, _] = databases_with("remote_schemas_namespace", LOCAL_SQL);
    let server = serve(&db, &dir).await;
    let query = json!({"query": "{
        notes { body }
        lib { __typename first: books_by_pk(id: 1) { title } books(order_by: {id: desc}) { title } }
        again: lib { books_by_pk(id: 2) { title } }
      }"});
    let answer = post_body(&server, &query, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {
            "notes": [{"body": "hello"}],
            "lib": {"__typename": "libquery_root", "first": {"title": "Dune"},
                    "books": [{"title": "Emma"}, {"title": "Dune"}]},
            "again": {"books_by_pk": {"title": "Emma"}}}})
    );
    let add = json!({"query": "mutation { lib { insert_books_one(object: {id: 3, title: \"Kim\"}) { id title } } }"});
    let answer = post_body(&server, &add, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"lib": {"insert_books_one": {"id": 3, "title": "Kim"}}}})
    );
    // A client's key that looks like the aliases sent, and a namespace asked
    // only its `__typename` (answered without a call).
    let query = json!({"query": "{ _ns1: lib { a: books_by_pk(id: 1) { title } b: books_by_pk(id: 2) { title } } }"});
    let answer = post_body(&server, &query, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"_ns1": {"a": {"title": "Dune"}, "b": {"title": "Emma"}}}})
    );
    let typename = json!({"query": "{ lib { __typename } }"});
    let answer = post_body(&server, &typename, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"lib": {"__typename": "libquery_root"}}})
    );
    // Its root fields are under the namespace only.
    let flat = post_body(&server, &json!({"query": "{ books { title } }"}), &[]).await;
    assert_eq!(
        flat["errors"][0]["extensions"]["code"],
        json!("validation-failed"),
        "{flat}"
    );
    server.stop().await;
    remote.stop().await;
}
