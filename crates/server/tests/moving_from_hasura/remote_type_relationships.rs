//! Relationships from a remote schema's type to a table (issue 33): the
//! remote's `books` joined to the notes naming each book, in one statement
//! per relationship field, under the caller's rules. The remote is a second
//! Grafton; a relay in front of it records every call.

use crate::remote_relationships::{BOOKS, LOCAL_SQL, NOTES};
use crate::remote_schemas::{Relay, REMOTE_SQL};
use crate::{databases_with, metadata, post_body, serve};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_types_relationship_to_a_table_is_joined_in_one_statement() {
    let env = "GRAFTON_TEST_REMOTE_TYPE_RELATIONSHIP_URL";
    let remote_dir = metadata("remote-type-rels-remote", &[("public_books.yaml", BOOKS)]);
    let dir = metadata("remote-type-rels", &[("public_notes.yaml", NOTES)]);
    // The remote's `books` type joined to the notes that name each book; a
    // relationship to another remote (not served yet) reported, the rest served.
    let remote_yaml = format!(
        "- name: library
  definition:
    url: \"{{{{{env}}}}}\"
    timeout_seconds: 5
  remote_relationships:
    - type_name: books
      relationships:
        - name: notes
          definition:
            to_source:
              relationship_type: array
              source: default
              table: {{schema: public, name: notes}}
              field_mapping: {{id: book_id}}
        - name: elsewhere
          definition:
            to_remote_schema: {{remote_schema: other, lhs_fields: [id], remote_field: {{x: {{arguments: {{}}}}}}}}
"
    );
    std::fs::write(dir.join("remote_schemas.yaml"), remote_yaml).expect("remote_schemas.yaml");
    let remotes = databases_with("remote_type_rels_remote", REMOTE_SQL);
    let locals = databases_with("remote_type_rels_local", LOCAL_SQL);
    for (remote_db, db) in remotes.into_iter().zip(locals) {
        let remote = serve(&remote_db, &remote_dir).await;
        let relay = Relay::default();
        std::env::set_var(env, relay.start(remote.url()).await);
        let server = serve(&db, &dir).await;
        let query = json!({"query": "{
            books(order_by: {id: asc}) { title notes(order_by: {id: asc}) { id body } pages }
          }"});
        let answer = post_body(&server, &query, &[]).await;
        assert_eq!(
            answer,
            json!({"data": {"books": [
                {"title": "Dune", "notes": [{"id": 1, "body": "a"}, {"id": 3, "body": "c"}], "pages": 412},
                {"title": "Emma", "notes": [{"id": 2, "body": "b"}], "pages": 474}]}})
        );
        // The remote was asked the mapped field, under an alias it never shows.
        let calls = relay.calls();
        let (_, body) = calls.last().expect("a call");
        let sent = body["query"].as_str().unwrap_or_default();
        assert!(sent.contains("notes: __typename grafton__id: id"), "{sent}");
        // A client's alias cannot pass for the fields Grafton asks.
        let alias = json!({"query": "{ books { grafton__id: id } }"});
        let answer = post_body(&server, &alias, &[]).await;
        let message = answer["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(message.contains("keeps for itself"), "{answer}");
        // Under the caller's row rule (the remote's books, the caller's notes),
        // and through a table's remote relationship and back.
        let reader = [("x-hasura-role", "reader"), ("x-hasura-user-id", "u1")];
        let round =
            json!({"query": "{ notes(order_by: {id: asc}) { id book { title notes { id } } } }"});
        let answer = post_body(&server, &round, &reader).await;
        let dune = json!({"title": "Dune", "notes": [{"id": 1}, {"id": 3}]});
        assert_eq!(
            answer,
            json!({"data": {"notes": [
                {"id": 1, "book": dune}, {"id": 3, "book": dune}, {"id": 4, "book": null}]}})
        );
        // The relationship to another remote is reported, not served.
        let report = crate::inconsistent(&server).await;
        let listed = report["inconsistent_objects"].to_string();
        assert!(listed.contains("library.books.elsewhere"), "{report}");
        server.stop().await;
        remote.stop().await;
    }
}
