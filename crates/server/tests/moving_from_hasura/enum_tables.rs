//! Enum tables (`is_enum: true`): the key's values are a GraphQL enum, with the
//! comment column as descriptions, and every column referencing the key takes that
//! type in outputs, inputs and filters; a value outside it is refused at validation.

use crate::{databases_with, metadata, post, serve};
use serde_json::json;

const FIXTURE: &str = "
CREATE TABLE statuses (value TEXT NOT NULL PRIMARY KEY, comment TEXT);
INSERT INTO statuses VALUES ('draft', 'Not public yet'), ('published', NULL);
CREATE TABLE docs (
  id INTEGER NOT NULL PRIMARY KEY,
  status TEXT NOT NULL REFERENCES statuses (value),
  title TEXT NOT NULL
);
INSERT INTO docs VALUES (1, 'draft', 'One'), (2, 'published', 'Two'), (3, 'published', 'Three');
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enum_table_types_the_columns_that_reference_it() {
    let dir = metadata(
        "enum-tables",
        &[
            (
                "public_statuses.yaml",
                "table: {name: statuses, schema: public}\nis_enum: true\n",
            ),
            ("public_docs.yaml", "table: {name: docs, schema: public}\n"),
        ],
    );
    for url in databases_with("enum_tables", FIXTURE) {
        let server = serve(&url, &dir).await;
        let body = post(
            &server,
            None,
            r#"{
              docs(where: {status: {_eq: published}}, order_by: {id: asc}) { id status }
              drafts: docs(where: {status: {_in: [draft]}}) { title }
              e: __type(name: "statuses_enum") { kind enumValues { name description } }
              f: __type(name: "docs") { fields { name type { ofType { name kind } } } }
            }"#,
        )
        .await;
        assert_eq!(
            body["data"]["docs"],
            json!([{"id": 2, "status": "published"}, {"id": 3, "status": "published"}]),
            "{url}: {body}"
        );
        assert_eq!(body["data"]["drafts"], json!([{"title": "One"}]), "{body}");
        assert_eq!(
            body["data"]["e"],
            json!({"kind": "ENUM", "enumValues": [
                {"name": "draft", "description": "Not public yet"},
                {"name": "published", "description": null}
            ]}),
            "{url}: {body}"
        );
        let status = (body["data"]["f"]["fields"].as_array().into_iter().flatten())
            .find(|f| f["name"] == "status")
            .map(|f| f["type"]["ofType"].clone());
        assert_eq!(
            status,
            Some(json!({"name": "statuses_enum", "kind": "ENUM"}))
        );
        // Inputs take the enum; a value outside it is refused before the database.
        let written = post(
            &server,
            None,
            "mutation { insert_docs_one(object: {id: 4, status: draft, title: \"Four\"}) { status } }",
        )
        .await;
        assert_eq!(
            written["data"]["insert_docs_one"]["status"], "draft",
            "{url}: {written}"
        );
        let refused = post(
            &server,
            None,
            "mutation { insert_docs_one(object: {id: 5, status: archived, title: \"Five\"}) { id } }",
        )
        .await;
        assert_eq!(
            refused["errors"][0]["extensions"]["code"], "validation-failed",
            "{url}: {refused}"
        );
        let counted = post(
            &server,
            None,
            "{ docs_aggregate(where: {status: {_neq: draft}}) { aggregate { count } } }",
        )
        .await;
        assert_eq!(
            counted["data"]["docs_aggregate"]["aggregate"]["count"], 2,
            "{counted}"
        );
        // The enum table is still a table.
        let rows = post(
            &server,
            None,
            "{ statuses(order_by: {value: asc}) { value comment } }",
        )
        .await;
        assert_eq!(rows["data"]["statuses"][1]["value"], "published", "{rows}");
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_that_cannot_be_an_enum_stops_start_up() {
    let [sqlite, _] = databases_with("enum_refused", FIXTURE);
    let dir = metadata(
        "enum-refused",
        &[("public_docs.yaml", "table: docs\nis_enum: true\n")],
    );
    let config = grafton_schema::hasura::load(&dir).expect("metadata loads");
    let started = grafton_server::start(&grafton_server::ServeOptions {
        database_url: sqlite,
        port: 0,
        config,
        strict_metadata: true,
        ..Default::default()
    })
    .await;
    let error = started.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        error.contains("enum table docs: it must have a text primary key"),
        "{error}"
    );
}
