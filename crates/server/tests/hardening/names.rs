//! Enum and naming edge cases that used to pass in silence: an enum value GraphQL
//! reserves (`__x`), and a relationship named by the config whose name a custom
//! column name took. Each now stops start-up, naming what clashes. (A JWT claim
//! given twice in different cases is refused in the auth crate's tests.)

use crate::{databases, options};

const FIXTURE: &str = "
CREATE TABLE statuses (value TEXT NOT NULL PRIMARY KEY);
INSERT INTO statuses VALUES ('draft'), ('__x');
CREATE TABLE authors (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE posts (
  id INTEGER NOT NULL PRIMARY KEY,
  author_id INTEGER NOT NULL REFERENCES authors (id),
  status TEXT NOT NULL REFERENCES statuses (value)
);
";

/// Why a server over `url` with `yaml` does not start.
async fn refused(url: &str, yaml: &str) -> String {
    let strict = grafton_server::ServeOptions {
        strict_metadata: true,
        ..options(url, yaml)
    };
    match grafton_server::start(&strict).await {
        Ok(_) => panic!("started with {yaml}"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reserved_enum_values_and_clashing_names_stop_start_up() {
    for url in databases("hardening_names", FIXTURE) {
        let error = refused(&url, "tables: {statuses: {is_enum: true}}").await;
        assert!(
            error.contains("'__x' is not a GraphQL enum value"),
            "{url}: {error}"
        );

        let clash = "
tables:
  posts:
    columns: {status: {custom_name: writer}}
    foreign_key_relationships: {writer: {type: object, columns: [author_id]}}
";
        let error = refused(&url, clash).await;
        assert!(
            error.contains("object relation 'writer' on posts: the table has a column or computed field named 'writer'"),
            "{url}: {error}"
        );
    }
}
