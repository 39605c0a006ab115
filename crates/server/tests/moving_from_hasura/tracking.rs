//! With Hasura metadata, the metadata decides what exists: only the tables it tracks
//! and the relationships it names are served; `--auto-track` serves every table and
//! foreign key besides (issue 28). Both backends.

use crate::{databases_with, metadata, post, serve};
use grafton_server::ServeOptions;
use serde_json::{json, Value};

const FIXTURE: &str = "
CREATE TABLE authors (id INTEGER NOT NULL PRIMARY KEY, full_name TEXT NOT NULL);
CREATE TABLE posts (
  id INTEGER NOT NULL PRIMARY KEY,
  author_id INTEGER NOT NULL REFERENCES authors (id),
  editor_id INTEGER REFERENCES authors (id),
  title TEXT NOT NULL
);
CREATE TABLE audit (id INTEGER NOT NULL PRIMARY KEY, post_id INTEGER REFERENCES posts (id));
CREATE VIEW post_titles AS SELECT id, title FROM posts;
INSERT INTO authors VALUES (1, 'Ada'), (2, 'Grace');
INSERT INTO posts VALUES (1, 1, 2, 'Engines');
INSERT INTO audit VALUES (1, 1);
";

/// The names of the fields of `type_name`, sorted, as admin sees them.
async fn fields(server: &grafton_server::Running, type_name: &str) -> Vec<String> {
    let q = format!("{{ __type(name: \"{type_name}\") {{ fields {{ name }} }} }}");
    let body = post(server, None, &q).await;
    let mut names: Vec<String> = (body["data"]["__type"]["fields"].as_array())
        .map(|f| {
            f.iter()
                .filter_map(|f| f["name"].as_str())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn has(list: &[String], name: &str) -> bool {
    list.iter().any(|n| n == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_what_the_metadata_tracks_is_served_unless_auto_tracking() {
    let dir = metadata(
        "tracking",
        &[
            (
                "public_authors.yaml",
                "table: {name: authors, schema: public}\narray_relationships:\n  - name: written\n    using: {foreign_key_constraint_on: {column: author_id, table: {name: posts, schema: public}}}\n",
            ),
            (
                "public_posts.yaml",
                "table: {name: posts, schema: public}\nobject_relationships:\n  - name: author\n    using: {foreign_key_constraint_on: author_id}\n",
            ),
        ],
    );
    for url in databases_with("hasura_tracking", FIXTURE) {
        let server = serve(&url, &dir).await;
        let roots = fields(&server, "query_root").await;
        assert!(
            has(&roots, "authors") && has(&roots, "posts"),
            "{url}: {roots:?}"
        );
        for untracked in [
            "audit",
            "audit_by_pk",
            "post_titles",
            "post_titles_aggregate",
        ] {
            assert!(!has(&roots, untracked), "{url}: {untracked} in {roots:?}");
        }
        // The metadata's relationships, and no other foreign key's.
        let posts = fields(&server, "posts").await;
        assert!(has(&posts, "author"), "{url}: {posts:?}");
        for generated in ["authorByEditorId", "editor", "audits", "audits_aggregate"] {
            assert!(!has(&posts, generated), "{url}: {generated} in {posts:?}");
        }
        assert_eq!(
            fields(&server, "authors").await,
            ["full_name", "id", "written", "written_aggregate"],
            "{url}"
        );
        let body = post(&server, None, "{ audit { id } }").await;
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {body}"
        );
        let body = post(&server, None, "{ posts { title author { full_name } } }").await;
        assert_eq!(
            body["data"],
            json!({"posts": [{"title": "Engines", "author": {"full_name": "Ada"}}]}),
            "{url}: {body}"
        );
        server.stop().await;

        // --auto-track: every table, view and foreign key besides the metadata's.
        let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
        let server = grafton_server::start(&ServeOptions {
            database_url: url.clone(),
            port: 0,
            config,
            auto_track: Some(true),
            ..ServeOptions::default()
        })
        .await
        .expect("server starts");
        let roots = fields(&server, "query_root").await;
        assert!(
            has(&roots, "audit") && has(&roots, "post_titles"),
            "{url}: {roots:?}"
        );
        let posts = fields(&server, "posts").await;
        assert!(
            has(&posts, "author") && has(&posts, "editor") && has(&posts, "audits"),
            "{url}: {posts:?}"
        );
        let body: Value = post(&server, None, "{ audit { post { title } } }").await;
        assert_eq!(
            body["data"],
            json!({"audit": [{"post": {"title": "Engines"}}]}),
            "{url}: {body}"
        );
        server.stop().await;
    }
}
