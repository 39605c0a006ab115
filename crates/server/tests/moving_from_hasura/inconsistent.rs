//! Inconsistent metadata (issue 28): what Grafton cannot serve is left out whole,
//! the rest is served, `get_inconsistent_metadata` lists each object in Hasura's
//! shape, and `--strict-metadata` refuses to start naming them all. Leaving out
//! never widens access. Both backends (functions on PostgreSQL only).

use crate::{databases_with, metadata};
use grafton_server::ServeOptions;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const FIXTURE: &str = "
CREATE TABLE authors (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE posts (
  id INTEGER NOT NULL PRIMARY KEY,
  author_id INTEGER NOT NULL REFERENCES authors (id),
  title TEXT NOT NULL
);
INSERT INTO authors VALUES (1, 'Ada');
INSERT INTO posts VALUES (1, 1, 'Engines');
";

const PG_EXTRA: &str = "
CREATE FUNCTION by_words(w tsvector) RETURNS SETOF posts STABLE LANGUAGE sql AS $$ SELECT * FROM posts $$;
CREATE FUNCTION all_posts() RETURNS SETOF posts STABLE LANGUAGE sql AS $$ SELECT * FROM posts $$;
";

const AUTHORS: &str = r#"table: {name: authors, schema: public}
array_relationships:
  - name: posts
    using: {foreign_key_constraint_on: {column: author_id, table: {name: posts, schema: public}}}
select_permissions:
  - role: user
    permission: {columns: [id, name], filter: {}}
  - role: editor
    permission: {columns: [id, name], filter: {}}
event_triggers:
  - name: welcome
    definition: {enable_manual: false, insert: {columns: '*'}}
    retry_conf: {interval_sec: 10, num_retries: 0, timeout_sec: 60}
    webhook: http://127.0.0.1:9/welcome
"#;

/// `ghost` points at a table the database lacks; `user`'s select names a column it
/// lacks; `editor`'s rule goes through `ghost`; `member` (user + editor) has its
/// own posts permission, which names the missing column too.
const POSTS: &str = r#"table: {name: posts, schema: public}
object_relationships:
  - name: author
    using: {foreign_key_constraint_on: author_id}
  - name: ghost
    using:
      manual_configuration:
        remote_table: {name: nowhere, schema: public}
        column_mapping: {author_id: id}
select_permissions:
  - role: user
    permission: {columns: [id, title, subtitle], filter: {}}
  - role: editor
    permission: {columns: [id, title], filter: {ghost: {id: {_eq: 1}}}}
  - role: member
    permission: {columns: [id, subtitle], filter: {}}
insert_permissions:
  - role: user
    permission: {columns: [id, title], check: {}, set: {author_id: x-hasura-user-id}}
"#;

fn project(name: &str, postgres: bool) -> std::path::PathBuf {
    let dir = metadata(
        name,
        &[
            ("public_authors.yaml", AUTHORS),
            ("public_posts.yaml", POSTS),
            ("public_gone.yaml", "table: {name: gone, schema: public}\n"),
        ],
    );
    let write = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("metadata file");
    };
    write(
        "inherited_roles.yaml",
        "- role_name: member\n  role_set: [user, editor]\n",
    );
    write(
        "actions.yaml",
        "actions:\n  - name: login\n    definition: {kind: synchronous, handler: http://127.0.0.1:9/login}\ncustom_types: {enums: [], input_objects: [], objects: [], scalars: []}\n",
    );
    write(
        "cron_triggers.yaml",
        "- name: nightly\n  webhook: http://127.0.0.1:9/nightly\n  schedule: '0 0 * * *'\n  include_in_metadata: true\n  payload: {}\n",
    );
    if postgres {
        write(
            "databases/default/functions/functions.yaml",
            "- \"!include public_by_words.yaml\"\n- \"!include public_all_posts.yaml\"\n",
        );
        write(
            "databases/default/functions/public_by_words.yaml",
            "function: {name: by_words, schema: public}\n",
        );
        write(
            "databases/default/functions/public_all_posts.yaml",
            "function: {name: all_posts, schema: public}\n",
        );
    }
    dir
}

async fn post(server: &grafton_server::Running, role: Option<&str>, query: &str) -> Value {
    crate::post(server, role, query).await
}

async fn inconsistent(server: &grafton_server::Running) -> Value {
    reqwest::Client::new()
        .post(format!("http://{}/v1/metadata", server.addr))
        .json(&json!({"type": "get_inconsistent_metadata", "args": {}}))
        .send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_served_is_left_out_whole_and_listed() {
    for url in databases_with("hasura_inconsistent", FIXTURE) {
        let postgres = url.starts_with("postgres");
        if postgres {
            grafton_testkit::psql(&url, PG_EXTRA.as_bytes());
        }
        let dir = project(&format!("inconsistent-{postgres}"), postgres);
        let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
        let options = ServeOptions {
            database_url: url.clone(),
            port: 0,
            config,
            ..ServeOptions::default()
        };
        let server = grafton_server::start(&options)
            .await
            .expect("starts without them");

        // Everything else is served.
        let body = post(
            &server,
            None,
            "{ authors { name posts { title } } posts { author { name } } }",
        )
        .await;
        assert_eq!(
            body["data"],
            json!({"authors": [{"name": "Ada", "posts": [{"title": "Engines"}]}],
                   "posts": [{"author": {"name": "Ada"}}]}),
            "{url}: {body}"
        );
        if postgres {
            let body = post(&server, None, "{ all_posts { id } }").await;
            assert_eq!(
                body["data"],
                json!({"all_posts": [{"id": 1}]}),
                "{url}: {body}"
            );
        }

        // Each object left out, in Hasura's shape.
        let listed = inconsistent(&server).await;
        assert_eq!(listed["is_consistent"], false, "{url}: {listed}");
        let objects = listed["inconsistent_objects"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let found: BTreeSet<(String, String)> = (objects.iter())
            .map(|o| {
                (
                    o["type"].as_str().unwrap_or("").to_owned(),
                    o["name"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let mut expected: BTreeSet<(String, String)> = [
            ("table", "table 'gone'"),
            ("object_relation", "object relation 'ghost' on posts"),
            (
                "select_permission",
                "select permission of role 'user' on posts",
            ),
            (
                "select_permission",
                "select permission of role 'editor' on posts",
            ),
            (
                "select_permission",
                "select permission of role 'member' on posts",
            ),
            ("action", "action 'login'"),
        ]
        .iter()
        .map(|(t, n)| (t.to_string(), n.to_string()))
        .collect();
        if postgres {
            expected.insert(("function".into(), "function 'by_words'".into()));
        } else {
            // Cron triggers are served on PostgreSQL only (event triggers on both).
            let cron = "cron trigger 'nightly'".into();
            expected.insert(("cron_trigger".into(), cron));
        }
        assert_eq!(found, expected, "{url}: {listed}");
        for o in &objects {
            assert!(
                o["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "{url}: {o}"
            );
            assert!(o["definition"].is_object(), "{url}: {o}");
        }
        let reason = |name: &str| {
            (objects.iter())
                .find(|o| o["name"] == name)
                .and_then(|o| o["reason"].as_str())
                .unwrap_or("")
                .to_owned()
        };
        assert!(
            reason("select permission of role 'user' on posts").contains("no column 'subtitle'"),
            "{listed}"
        );
        assert!(
            reason("object relation 'ghost' on posts").contains("'nowhere' is not tracked"),
            "{listed}"
        );
        assert!(
            reason("select permission of role 'editor' on posts").contains("ghost"),
            "{listed}"
        );
        if postgres {
            assert!(
                reason("function 'by_words'").contains("argument 'w' has type tsvector"),
                "{listed}"
            );
        }

        // A permission goes whole: user reads no posts at all (not id and title),
        // but keeps its other permissions.
        let body = post(&server, Some("user"), "{ posts { id } }").await;
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {body}"
        );
        let body = post(&server, Some("user"), "{ authors { name } }").await;
        assert_eq!(
            body["data"],
            json!({"authors": [{"name": "Ada"}]}),
            "{url}: {body}"
        );
        let body = post(
            &server,
            Some("user"),
            "mutation { insert_posts(objects: [{id: 2, title: \"x\"}]) { affected_rows } }",
        )
        .await;
        assert_eq!(
            body["data"],
            json!({"insert_posts": {"affected_rows": 1}}),
            "{url}: {body}"
        );
        // An inherited role whose own permission went does not fall back to its
        // parents' wider ones: it loses every permission.
        let body = post(&server, Some("member"), "{ authors { name } }").await;
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {body}"
        );
        let body = post(&server, Some("member"), "{ posts { id } }").await;
        assert_eq!(
            body["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {body}"
        );
        server.stop().await;

        // Strict: nothing starts, and every object is named.
        let strict = ServeOptions {
            strict_metadata: true,
            config: grafton_schema::hasura::load(&dir).expect("metadata loads"),
            ..options
        };
        let error = match grafton_server::start(&strict).await {
            Ok(_) => panic!("{url}: started with --strict-metadata"),
            Err(e) => e.to_string(),
        };
        for (_, name) in &expected {
            assert!(
                error.contains(name.as_str()),
                "{url}: {name} missing from: {error}"
            );
        }
    }
}
