//! Writes through views, as Hasura allows them: PostgreSQL's auto-updatable views
//! and SQLite views with INSTEAD OF triggers, found again by their configured key
//! (views have no `ctid` or `rowid`) so `returning` can follow relationships.

use crate::*;
use serde_json::json;

#[tokio::test]
async fn simple_views_take_inserts_updates_and_deletes() {
    let _g = serial().await;
    for db in BOTH {
        let d = ok(
            db,
            r#"mutation { insert_acme_documents_one(object: {id: 50, org_id: 1, owner_id: 2, title: "via view", body: "v"}) { id title owner { name } } }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d["insert_acme_documents_one"],
            json!({"id": 50, "title": "via view", "owner": {"name": "bob"}}),
            "{db:?}"
        );
        // Several fields in one transaction: each write's rows found by the key.
        let d = ok(
            db,
            r#"mutation {
                u: update_acme_documents(where: {id: {_eq: 50}}, _set: {body: "edited"}) { affected_rows returning { id body owner { name } } }
                one: update_acme_documents_by_pk(pk_columns: {id: 50}, _set: {title: "renamed"}) { title }
            }"#,
            json!(null),
        )
        .await;
        assert_eq!(
            d,
            json!({
                "u": {"affected_rows": 1, "returning": [{"id": 50, "body": "edited", "owner": {"name": "bob"}}]},
                "one": {"title": "renamed"}
            }),
            "{db:?}"
        );
        let d = ok(
            db,
            "{ documents_by_pk(id: 50) { org_id title body } }",
            json!(null),
        )
        .await;
        assert_eq!(
            d["documents_by_pk"],
            json!({"org_id": 1, "title": "renamed", "body": "edited"}),
            "{db:?}: the base table changed"
        );
        let d = ok(
            db,
            "mutation { delete_acme_documents_by_pk(id: 50) { id title owner { name } } }",
            json!(null),
        )
        .await;
        assert_eq!(
            d["delete_acme_documents_by_pk"],
            json!({"id": 50, "title": "renamed", "owner": {"name": "bob"}}),
            "{db:?}"
        );
        let d = ok(db, "{ documents_by_pk(id: 50) { id } }", json!(null)).await;
        assert_eq!(d["documents_by_pk"], json!(null), "{db:?}");
        // A view without a key takes no writes (its rows could not be found again).
        let d = ok(
            db,
            "{ __schema { mutationType { fields { name } } } }",
            json!(null),
        )
        .await;
        let names: Vec<&str> = d["__schema"]["mutationType"]["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["name"].as_str())
            .collect();
        assert!(names.contains(&"insert_acme_documents"), "{db:?}");
        assert!(
            !names.iter().any(|n| n.contains("plain_titles")),
            "{db:?}: {names:?}"
        );
    }
}
