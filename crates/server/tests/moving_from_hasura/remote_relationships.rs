//! Remote relationships (issue 33): a table's rows joined to a remote
//! schema's field, one call per relationship per request whatever the number
//! of rows. The remote is a second Grafton serving books; a relay in front of
//! it records every call.

use crate::remote_schemas::{Relay, REMOTE_SQL};
use crate::{databases_with, metadata, post_body, serve};
use serde_json::{json, Value};

/// Notes, each naming a book of the remote (one none).
pub(crate) const LOCAL_SQL: &str = "
CREATE TABLE notes (id INTEGER NOT NULL PRIMARY KEY, body TEXT NOT NULL, book_id INTEGER, owner TEXT NOT NULL, weight NUMERIC(30, 4));
INSERT INTO notes VALUES (1, 'a', 1, 'u1', 12345678901234567.1234), (2, 'b', 2, 'u2', NULL), (3, 'c', 1, 'u1', NULL), (4, 'd', NULL, 'u1', NULL);
";

/// The remote's books, for its roles `reader` and `user`.
pub(crate) const BOOKS: &str = "table: {name: books, schema: public}
select_permissions:
  - role: reader
    permission: {columns: [id, title, pages], filter: {}}
  - role: user
    permission: {columns: [id, title, pages], filter: {}}
";

/// The notes with two relationships to the remote: Hasura's current form
/// (`to_remote_schema`) and its older one, whose argument is an input object.
/// A third asks what the remote refuses (a negative limit). `user` may not
/// read `book_id` (so sees none); `reader` may.
pub(crate) const NOTES: &str = "table: {name: notes, schema: public}
remote_relationships:
  - name: book
    definition:
      to_remote_schema:
        remote_schema: library
        lhs_fields: [book_id]
        remote_field:
          books_by_pk:
            arguments: {id: $book_id}
  - name: same_books
    definition:
      remote_schema: library
      hasura_fields: [book_id]
      remote_field:
        books:
          arguments: {where: {id: {_eq: $book_id}}}
  - name: refused_books
    definition:
      to_remote_schema:
        remote_schema: library
        lhs_fields: [book_id]
        remote_field:
          books:
            arguments: {where: {id: {_eq: $book_id}}, limit: -1}
select_permissions:
  - role: user
    permission: {columns: [id, body], filter: {owner: {_eq: X-Hasura-User-Id}}}
  - role: reader
    permission: {columns: [id, body, book_id], filter: {owner: {_eq: X-Hasura-User-Id}}}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_joined_to_a_remote_field_in_one_call_per_relationship() {
    let env = "GRAFTON_TEST_REMOTE_RELATIONSHIP_URL";
    let remote_dir = metadata("remote-rels-remote", &[("public_books.yaml", BOOKS)]);
    let dir = metadata("remote-rels", &[("public_notes.yaml", NOTES)]);
    let remote_yaml = format!(
        "- name: library\n  definition:\n    url: \"{{{{{env}}}}}\"\n    timeout_seconds: 5\n"
    );
    std::fs::write(dir.join("remote_schemas.yaml"), remote_yaml).expect("remote_schemas.yaml");
    // The remote on the same backend as the server (their types merge).
    let remotes = databases_with("remote_rels_remote", REMOTE_SQL);
    let locals = databases_with("remote_rels_local", LOCAL_SQL);
    for (remote_db, db) in remotes.into_iter().zip(locals) {
        let remote = serve(&remote_db, &remote_dir).await;
        let relay = Relay::default();
        std::env::set_var(env, relay.start(remote.url()).await);
        let server = serve(&db, &dir).await;
        let query = json!({"query": "query ($first: Int) {
            notes(order_by: {id: asc}) {
              id
              book { __typename title }
              same_books(limit: $first) { title pages }
            }
          }", "variables": {"first": 5}});
        let before = relay.calls().len();
        let answer = post_body(&server, &query, &[]).await;
        let emma = json!([{"title": "Emma", "pages": 474}]);
        let dune = json!([{"title": "Dune", "pages": 412}]);
        assert_eq!(
            answer,
            json!({"data": {"notes": [
                {"id": 1, "book": {"__typename": "books", "title": "Dune"}, "same_books": dune},
                {"id": 2, "book": {"__typename": "books", "title": "Emma"}, "same_books": emma},
                {"id": 3, "book": {"__typename": "books", "title": "Dune"}, "same_books": dune},
                {"id": 4, "book": null, "same_books": null}]}})
        );
        // One call per relationship, each book once (two books for four
        // rows, the row without one not asked), the client's variable passed.
        let calls = relay.calls();
        assert_eq!(calls.len(), before + 2, "{calls:?}");
        let documents: Vec<&str> = (calls[before..].iter())
            .map(|(_, body)| body["query"].as_str().unwrap_or_default())
            .collect();
        let by_pk = (documents.iter())
            .find(|d| d.contains("books_by_pk"))
            .expect("a call for `book`");
        assert!(by_pk.contains("f0: books_by_pk(id: 1)"), "{by_pk}");
        assert!(by_pk.contains("f1: books_by_pk(id: 2)"), "{by_pk}");
        assert!(!by_pk.contains("f2"), "{by_pk}");
        let listed = (documents.iter())
            .find(|d| d.contains("books("))
            .expect("a call for `same_books`");
        assert!(
            listed.contains("books(where: {id: {_eq: 1}}, limit: $first)"),
            "{listed}"
        );
        let (_, body) = (calls[before..].iter())
            .find(|(_, b)| b["query"].as_str().is_some_and(|q| q.contains("books(")))
            .expect("call");
        assert_eq!(body["variables"], json!({"first": 5}));

        // The rest of the answer is the database's, byte for byte (a numeric
        // past a double's precision too).
        let raw = |query: &'static str| {
            let request = reqwest::Client::new()
                .post(server.url())
                .json(&json!({ "query": query }));
            async move {
                let text = request.send().await.expect("answer").text().await;
                text.expect("text")
            }
        };
        let plain = raw("{ notes_by_pk(id: 1) { weight } }").await;
        let joined = raw("{ notes_by_pk(id: 1) { weight book { title } } }").await;
        let weight = |t: &str| {
            t.split("\"weight\":")
                .nth(1)
                .map(|r| r.split([',', '}']).next().map(str::to_owned))
        };
        assert_eq!(weight(&plain), weight(&joined), "{plain} {joined}");
        assert!(
            weight(&plain)
                .flatten()
                .is_some_and(|w| w.contains("1234567890123456")),
            "{plain}"
        );

        // Through an aggregate's nodes and a write's answer.
        let answer = post_body(
            &server,
            &json!({"query": "{ notes_aggregate(where: {id: {_eq: 2}}) { nodes { book { title } } } }"}),
            &[],
        )
        .await;
        let nodes = json!({"nodes": [{"book": {"title": "Emma"}}]});
        assert_eq!(answer, json!({"data": {"notes_aggregate": nodes}}));
        let insert = json!({"query": "mutation {
            insert_notes_one(object: {id: 5, body: \"e\", book_id: 2, owner: \"u1\"}) { id book { title } }
          }"});
        let answer = post_body(&server, &insert, &[]).await;
        let one = json!({"id": 5, "book": {"title": "Emma"}});
        assert_eq!(answer, json!({"data": {"insert_notes_one": one}}));

        // A hundred rows, each a book of its own: still one call, a field each.
        let objects: Vec<Value> = (100..200)
            .map(|id| json!({"id": id, "body": "x", "book_id": id - 99, "owner": "u3"}))
            .collect();
        let many = json!({"query": "mutation ($o: [notes_insert_input!]!) { insert_notes(objects: $o) { affected_rows } }",
            "variables": {"o": objects}});
        let answer = post_body(&server, &many, &[]).await;
        assert_eq!(
            answer,
            json!({"data": {"insert_notes": {"affected_rows": 100}}})
        );
        let before = relay.calls().len();
        let hundred = json!({"query": "{ notes(where: {id: {_gte: 100}}, order_by: {id: asc}) { book { title } } }"});
        let answer = post_body(&server, &hundred, &[]).await;
        let books = answer["data"]["notes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(books.len(), 100, "{answer}");
        assert_eq!(books[1], json!({"book": {"title": "Emma"}}));
        assert_eq!(books[99], json!({"book": null}));
        let calls = relay.calls();
        assert_eq!(calls.len(), before + 1, "{calls:?}");
        let sent = calls[before].1["query"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            sent.contains("f99: books_by_pk(id: 100)") && !sent.contains("f100"),
            "{sent}"
        );

        // A role that reads the columns sees the relationship, its own rows
        // joined and its session sent to the remote; one that may not read
        // `book_id` does not see it at all.
        let reader = [("x-hasura-role", "reader"), ("x-hasura-user-id", "u2")];
        let mine = json!({"query": "{ notes { body book { title } } }"});
        let answer = post_body(&server, &mine, &reader).await;
        let row = json!({"body": "b", "book": {"title": "Emma"}});
        assert_eq!(answer, json!({"data": {"notes": [row]}}));
        let (headers, _) = relay.calls().last().cloned().expect("a call");
        assert_eq!(headers["x-hasura-role"], "reader");
        assert_eq!(headers["x-hasura-user-id"], "u2");
        let user = [("x-hasura-role", "user"), ("x-hasura-user-id", "u1")];
        let answer = post_body(&server, &mine, &user).await;
        assert_eq!(
            answer["errors"][0]["extensions"]["code"], "validation-failed",
            "{answer}"
        );

        // The remote refuses what it is asked: the request fails as Hasura's
        // does, the remote's errors inside.
        let refused = json!({"query": "{ notes { id refused_books { title } } }"});
        let answer = post_body(&server, &refused, &[]).await;
        assert_eq!(answer["data"], Value::Null, "{answer}");
        let error = &answer["errors"][0];
        assert_eq!(error["message"], "Errors from remote server", "{answer}");
        assert_eq!(error["extensions"]["code"], "unexpected", "{answer}");
        assert!(
            error["extensions"]["internal"]["errors"].is_array(),
            "{answer}"
        );

        // Not in subscriptions (refused, never answered with the row's values).
        let refused = grafton_remote_refusal(&server).await;
        assert!(
            refused.contains("not allowed in subscriptions") && refused.contains("not-supported"),
            "{refused}"
        );
        server.stop().await;
        remote.stop().await;
    }
}

/// A subscription reaching a remote relationship: the error it is refused with.
async fn grafton_remote_refusal(server: &grafton_server::Running) -> String {
    use futures_util::StreamExt;
    let mut ws = crate::subscribe(
        server,
        json!({}),
        "subscription { notes { book { title } } }",
    )
    .await;
    while let Some(Ok(message)) = ws.next().await {
        let text = message.into_text().unwrap_or_default().to_string();
        if text.contains("\"error\"") {
            return text;
        }
    }
    String::new()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_api_creates_updates_and_deletes_a_remote_relationship() {
    const SECRET: &str = "remote-rel-secret";
    let [remote_db, _] = databases_with("remote_rels_api_remote", REMOTE_SQL);
    let remote_dir = metadata("remote-rels-api-remote", &[("public_books.yaml", BOOKS)]);
    let remote = serve(&remote_db, &remote_dir).await;
    let [db, _] = databases_with("remote_rels_api", LOCAL_SQL);
    let server = crate::store_server(db, SECRET).await;
    let api = |body: Value| crate::metadata_api(&server, SECRET, body);
    let admin = [("x-hasura-admin-secret", SECRET)];
    let ok = (200, json!({"message": "success"}));
    let definition = json!({"url": remote.url(), "timeout_seconds": 5});
    let add =
        json!({"type": "add_remote_schema", "args": {"name": "library", "definition": definition}});
    assert_eq!(api(add).await, ok);
    let rel = |kind: &str, field: Value| {
        json!({"type": kind, "args": {"name": "book", "source": "default",
            "table": {"schema": "public", "name": "notes"},
            "definition": {"to_remote_schema": {"remote_schema": "library",
                "lhs_fields": ["book_id"], "remote_field": field}}}})
    };
    let by_pk = json!({"books_by_pk": {"arguments": {"id": "$book_id"}}});
    assert_eq!(
        api(rel("pg_create_remote_relationship", by_pk.clone())).await,
        ok
    );
    let query = json!({"query": "{ notes_by_pk(id: 2) { book { title } } }"});
    let answer = post_body(&server, &query, &admin).await;
    assert_eq!(
        answer,
        json!({"data": {"notes_by_pk": {"book": {"title": "Emma"}}}})
    );
    // Twice: refused; a field the remote lacks: refused, nothing changed.
    let (status, again) = api(rel("pg_create_remote_relationship", by_pk)).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (400, Some("already-exists")),
        "{again}"
    );
    let missing = json!({"book_by_id": {"arguments": {"id": "$book_id"}}});
    let (status, refused) = api(rel("pg_update_remote_relationship", missing)).await;
    assert_eq!(status, 400, "{refused}");
    let reason = refused["internal"][0]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains("\"book_by_id\" not found"), "{refused}");
    let answer = post_body(&server, &query, &admin).await;
    assert_eq!(
        answer,
        json!({"data": {"notes_by_pk": {"book": {"title": "Emma"}}}})
    );
    // Updated to a list field, then deleted.
    let listed = json!({"books": {"arguments": {"where": {"id": {"_eq": "$book_id"}}}}});
    assert_eq!(api(rel("pg_update_remote_relationship", listed)).await, ok);
    let answer = post_body(&server, &query, &admin).await;
    assert_eq!(
        answer,
        json!({"data": {"notes_by_pk": {"book": [{"title": "Emma"}]}}})
    );
    // A relationship from the remote's type to the table, created and deleted.
    let type_rel = |kind: &str| {
        json!({"type": kind, "args": {"remote_schema": "library", "type_name": "books",
            "name": "notes", "definition": {"to_source": {"relationship_type": "array",
                "source": "default", "table": {"schema": "public", "name": "notes"},
                "field_mapping": {"id": "book_id"}}}}})
    };
    assert_eq!(
        api(type_rel("create_remote_schema_remote_relationship")).await,
        ok
    );
    let back = json!({"query": "{ books_by_pk(id: 2) { notes { id } } }"});
    let answer = post_body(&server, &back, &admin).await;
    assert_eq!(
        answer,
        json!({"data": {"books_by_pk": {"notes": [{"id": 2}]}}})
    );
    assert_eq!(
        api(type_rel("delete_remote_schema_remote_relationship")).await,
        ok
    );
    let answer = post_body(&server, &back, &admin).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"], "validation-failed",
        "{answer}"
    );
    let delete = json!({"type": "pg_delete_remote_relationship", "args": {"name": "book",
        "table": {"schema": "public", "name": "notes"}}});
    assert_eq!(api(delete.clone()).await, ok);
    let answer = post_body(&server, &query, &admin).await;
    assert_eq!(
        answer["errors"][0]["extensions"]["code"], "validation-failed",
        "{answer}"
    );
    let (status, gone) = api(delete).await;
    assert_eq!(
        (status, gone["code"].as_str()),
        (400, Some("not-exists")),
        "{gone}"
    );
    server.stop().await;
    remote.stop().await;
}
