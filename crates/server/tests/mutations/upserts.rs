//! An upsert's conflict branch is an update: the role's update permission (filter,
//! check and presets) governs it exactly as it governs `update_projects`. Role
//! `planner` may insert budgets under 5000 but update them only under 1000, and its
//! updates stamp `updated_by` with the user's id.

use crate::*;
use serde_json::{json, Value};

const USER: (&str, &str) = ("1", "7");

async fn as_planner(db: Db, query: &str) -> Value {
    let (status, v) = post_as(db, "planner", USER, query, json!(null)).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{db:?}: {v}");
    v
}

async fn refused(db: Db, query: &str, what: &str) {
    let before = checksum(db);
    let v = as_planner(db, query).await;
    assert_eq!(
        v["errors"][0]["extensions"]["code"], "permission-error",
        "{db:?}: {query}: {v}"
    );
    let message = v["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains(what), "{db:?}: {message}");
    assert!(v["data"].is_null(), "{db:?}: {v}");
    assert_eq!(checksum(db), before, "{db:?}: {query} wrote something");
}

async fn project(db: Db, code: &str) -> Value {
    let d = ok(
        db,
        "query ($c: String!) { projects(where: {code: {_eq: $c}}) { budget updated_by } }",
        json!({ "c": code }),
    )
    .await;
    d["projects"][0].clone()
}

#[tokio::test]
async fn the_conflict_branch_obeys_the_update_check_and_presets() {
    let _g = serial().await;
    for db in BOTH {
        // The issue's reproduction: through update_projects this change is refused...
        refused(
            db,
            r#"mutation { update_projects(where: {code: {_eq: "A1"}}, _set: {budget: 2000}) { affected_rows } }"#,
            "update",
        )
        .await;
        // ...and so it must be through the upsert (2000 passes the insert check).
        for query in [
            r#"mutation { insert_projects(objects: [{code: "A1", budget: 2000}], on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { affected_rows } }"#,
            r#"mutation { insert_projects_one(object: {code: "A1", budget: 2000}, on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { id } }"#,
            r#"mutation { insert_projects_one(object: {code: "A1", budget: 2000}, on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { id budget updated_by } }"#,
            // A batch whose new row is fine but whose updated row is not.
            r#"mutation { insert_projects(objects: [{code: "N1", budget: 10}, {code: "A1", budget: 2000}], on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { returning { code } } }"#,
        ] {
            refused(db, query, "update").await;
        }
        assert_eq!(
            project(db, "A1").await,
            json!({"budget": 10, "updated_by": null}),
            "{db:?}"
        );
        // Within the check, the update happens and the preset stamps it.
        let v = as_planner(db, r#"mutation { insert_projects_one(object: {code: "A1", budget: 500}, on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { code budget updated_by } }"#).await;
        assert_eq!(
            v["data"]["insert_projects_one"],
            json!({"code": "A1", "budget": 500, "updated_by": 7}),
            "{db:?}: {v}"
        );
        // New rows take the insert check only: 3000 may be inserted, never updated to.
        let v = as_planner(db, r#"mutation { insert_projects(objects: [{code: "A1", budget: 700}, {code: "C3", budget: 3000}], on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { affected_rows returning { code budget updated_by } } }"#).await;
        assert_eq!(
            v["data"]["insert_projects"],
            json!({"affected_rows": 2, "returning": [
                {"code": "A1", "budget": 700, "updated_by": 7},
                {"code": "C3", "budget": 3000, "updated_by": null}
            ]}),
            "{db:?}: {v}"
        );
        // ...and a new row over the insert check fails the whole batch.
        refused(db, r#"mutation { insert_projects(objects: [{code: "A1", budget: 900}, {code: "D4", budget: 6000}], on_conflict: {constraint: projects_code_key, update_columns: [budget]}) { affected_rows } }"#, "insert").await;
        // Without update_columns the conflict does nothing: no preset, no check.
        let v = as_planner(db, r#"mutation { insert_projects(objects: [{code: "C3", budget: 4000}], on_conflict: {constraint: projects_code_key, update_columns: []}) { affected_rows } }"#).await;
        assert_eq!(
            v["data"]["insert_projects"]["affected_rows"], 0,
            "{db:?}: {v}"
        );
        assert_eq!(
            project(db, "C3").await,
            json!({"budget": 3000, "updated_by": null}),
            "{db:?}"
        );
        ok(
            db,
            r#"mutation { delete_projects(where: {code: {_neq: "A1"}}) { affected_rows } update_projects(where: {}, _set: {budget: 10, updated_by: null}) { affected_rows } }"#,
            json!(null),
        )
        .await;
    }
}
