//! Relationships from one remote schema's type to another remote schema
//! (`to_remote_schema` in a remote's `remote_relationships`): the books of a
//! second Grafton joined to their authors on the graphql-js remote, and those
//! authors back to a book, one call per relationship field whatever the
//! number of objects (counted at the graphql-js remote).

use super::remote_js::JsRemote;
use super::remote_schemas::books_remote;
use crate::{databases_with, inconsistent, metadata, post_body, serve};
use serde_json::json;

/// `library` (the books) with `writer` to `shelf`'s `author`, and `shelf`
/// (types named `js_…`, sent the client's headers) with `first_book` back to
/// `library`; `user` sees only `echo` of `shelf`, so not `writer` (and all of
/// `library`, which serves it its books); `ghost` asks a field `shelf` does
/// not have.
fn remotes_yaml(library: &str, shelf: &str) -> String {
    format!(
        r#"- name: library
  definition: {{url: "{{{{{library}}}}}", timeout_seconds: 5}}
  remote_relationships:
    - type_name: books
      relationships:
        - name: writer
          definition:
            to_remote_schema:
              remote_schema: shelf
              lhs_fields: [id]
              remote_field: {{author: {{arguments: {{id: $id}}}}}}
        - name: ghost
          definition:
            to_remote_schema:
              remote_schema: shelf
              lhs_fields: [id]
              remote_field: {{nobody: {{arguments: {{id: $id}}}}}}
- name: shelf
  definition:
    url: "{{{{{shelf}}}}}"
    forward_client_headers: true
    customization: {{type_names: {{prefix: js_}}}}
  permissions:
    - role: user
      definition:
        schema: "type Query {{ echo(text: String): String }}"
  remote_relationships:
    - type_name: Author
      relationships:
        - name: first_book
          definition:
            to_remote_schema:
              remote_schema: library
              lhs_fields: [number]
              remote_field: {{books_by_pk: {{arguments: {{id: $number}}}}}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_type_joins_another_remote_in_one_call_per_field_and_back() {
    let library = books_remote("remote_to_remote_library").await;
    let shelf = JsRemote::start();
    let (a, b) = (
        "GRAFTON_TEST_REMOTE_TO_REMOTE_LIBRARY",
        "GRAFTON_TEST_REMOTE_TO_REMOTE_SHELF",
    );
    std::env::set_var(a, library.url());
    std::env::set_var(b, &shelf.url);
    let dir = metadata(
        "remote-to-remote",
        &[("public_notes.yaml", "table: {name: notes, schema: public}")],
    );
    std::fs::write(dir.join("remote_schemas.yaml"), remotes_yaml(a, b)).expect("yaml");
    // Each call counts 100: the remote's root field and one per relationship
    // field of the document.
    let limits = "cost_limit: {per_role: {admin: 400}}\n";
    std::fs::write(dir.join("api_limits.yaml"), limits).expect("api_limits.yaml");
    let sql = "CREATE TABLE notes (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL);";
    let [db, _] = databases_with("remote_to_remote", sql);
    let server = serve(&db, &dir).await;
    let before = shelf.calls().await;
    let query = json!({"query": "{ books(order_by: {id: asc}) { title
        writer { __typename name first_book { title writer { name } } } } }"});
    let answer = post_body(&server, &query, &[]).await;
    assert_eq!(
        answer,
        json!({"data": {"books": [
            {"title": "Dune", "writer": {"__typename": "js_Author", "name": "Ada",
                "first_book": {"title": "Dune", "writer": {"name": "Ada"}}}},
            {"title": "Emma", "writer": {"__typename": "js_Author", "name": "Grace",
                "first_book": {"title": "Emma", "writer": {"name": "Grace"}}}}]}})
    );
    // Two books, two levels of `writer`: two calls (and this count's own).
    assert_eq!(shelf.calls().await, before + 3);
    // One more level is one call more: past the role's cost.
    let deeper = json!({"query": "{ books { writer { first_book { writer {
        first_book { title } } } } } }"});
    let answer = post_body(&server, &deeper, &[]).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"],
        json!("cost-limit-exceeded"),
        "{answer}"
    );
    // Its arguments the relationship does not fill are the client's; none here.
    let typed = json!({"query": "{ __type(name: \"books\") { fields { name type { name } } } }"});
    let answer = post_body(&server, &typed, &[]).await;
    let fields = answer["data"]["__type"]["fields"]
        .as_array()
        .expect("fields");
    assert!(
        fields.contains(&json!({"name": "writer", "type": {"name": "js_Author"}})),
        "{answer}"
    );
    // A role whose part of `shelf` has no `author` is not served `writer`.
    let user = [("x-hasura-role", "user")];
    let books = json!({"query": "{ books { title writer { name } } }"});
    let answer = post_body(&server, &books, &user).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"],
        json!("validation-failed"),
        "{answer}"
    );
    let plain = json!({"query": "{ books_by_pk(id: 1) { title } }"});
    assert_eq!(
        post_body(&server, &plain, &user).await,
        json!({"data": {"books_by_pk": {"title": "Dune"}}})
    );
    // `shelf` is sent the client's headers: reaching it through `writer` is
    // refused over GET (a cross-site link must not carry the cookies there).
    for (query, status) in [
        ("{ books { title } }", 200),
        ("{ books { writer { name } } }", 405),
        (
            "{ books { ...W } } fragment W on books { writer { name } }",
            405,
        ),
    ] {
        let get = reqwest::Client::new()
            .get(server.url())
            .query(&[("query", query)])
            .send()
            .await
            .expect("answer");
        assert_eq!(get.status().as_u16(), status, "{query}");
    }
    // One the remote cannot answer is reported; the others are served.
    let listed = inconsistent(&server).await;
    let ghost = (listed["inconsistent_objects"]
        .as_array()
        .into_iter()
        .flatten())
    .find(|o| o["name"].as_str().is_some_and(|n| n.contains("ghost")));
    let reason = ghost.map(|g| g["reason"].to_string()).unwrap_or_default();
    assert!(reason.contains("nobody"), "{listed}");
    server.stop().await;
    library.stop().await;
}
