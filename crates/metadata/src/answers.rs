//! How the service answers: Hasura's refusals of a change that cannot be kept, and
//! its `{is_consistent, inconsistent_objects}`.

use crate::store::StoreError;
use crate::Refusal;
use grafton_schema::inconsistent::Inconsistency;
use serde_json::{json, Value};

pub(crate) fn store_refusal(e: StoreError) -> Refusal {
    match e {
        StoreError::Conflict { .. } => Refusal::new("conflict", e.to_string(), "$"),
        e => Refusal {
            server_fault: true,
            ..Refusal::new("unexpected", e.to_string(), "$")
        },
    }
}

/// A change whose schemas do not build: refused, nothing kept.
pub(crate) fn build_refusal(e: grafton_engine::BuildError) -> Refusal {
    match e {
        grafton_engine::BuildError::Inconsistent(list) => {
            inconsistent(&list.iter().collect::<Vec<_>>(), false, "pg_create")
        }
        e => Refusal::new("invalid-configuration", e.to_string(), "$.args"),
    }
}

/// Hasura's refusal of a change that leaves objects it cannot serve: the object a
/// command adds, named; other objects it breaks, or a replaced whole, summed up.
pub(crate) fn inconsistent(objects: &[&Inconsistency], replaced: bool, kind: &str) -> Refusal {
    let adds = [
        "pg_track",
        "pg_create",
        "pg_add",
        "pg_set",
        "bulk",
        "create_action",
        "update_action",
        "set_custom_types",
    ];
    let (code, error) = if replaced {
        (
            "unexpected",
            "cannot continue due to inconsistent metadata".to_owned(),
        )
    } else if kind == "add_remote_schema_permissions" {
        let reasons: Vec<&str> = objects.iter().map(|i| i.reason.as_str()).collect();
        ("validation-failed", reasons.join("; "))
    } else if kind == "add_remote_schema" || kind == "update_remote_schema" {
        // Hasura's code for a remote that cannot be served as defined.
        let reasons: Vec<&str> = objects.iter().map(|i| i.reason.as_str()).collect();
        ("remote-schema-error", reasons.join("; "))
    } else if adds.iter().any(|a| kind.starts_with(a)) {
        let reasons: Vec<&str> = objects.iter().map(|i| i.reason.as_str()).collect();
        let error = format!("Inconsistent object: {}", reasons.join("; "));
        ("invalid-configuration", error)
    } else {
        let error = "cannot continue due to new inconsistent metadata".to_owned();
        ("unexpected", error)
    };
    let mut refusal = Refusal::new(code, error, "$.args");
    let objects = objects.iter().map(|i| i.to_json()).collect();
    refusal.internal = Some(Box::new(Value::Array(objects)));
    refusal
}

/// Hasura's answer to `get_inconsistent_metadata`: whether everything is served,
/// and each object left out.
pub fn consistency(left_out: &[Inconsistency]) -> Value {
    json!({
        "is_consistent": left_out.is_empty(),
        "inconsistent_objects": left_out.iter().map(|i| i.to_json()).collect::<Vec<_>>(),
    })
}
