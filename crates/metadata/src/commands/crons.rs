//! Cron triggers in the metadata: `create_cron_trigger` (Hasura's args, `replace`
//! to change one) and `delete_cron_trigger`. The trigger is checked by building
//! the result (its schedule parsed, its environment variables set).

use crate::document::{list, text};
use crate::Refusal;
use grafton_schema::config::CronTriggerConfig;
use serde_json::{Map, Value};

/// The document's cron triggers, made a list if absent.
fn crons(doc: &mut Value) -> Result<&mut Vec<Value>, Refusal> {
    let Some(map) = doc.as_object_mut() else {
        return Err(Refusal::new(
            "unexpected",
            "the metadata is not an object",
            "$",
        ));
    };
    list(map, "cron_triggers")
}

fn position(crons: &[Value], name: &str) -> Option<usize> {
    (crons.iter()).position(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

/// `create_cron_trigger`: `{name, webhook, schedule, payload?, retry_conf?,
/// headers?, include_in_metadata, comment?, replace?}`.
pub fn create(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let mut trigger = Map::new();
    for key in [
        "name",
        "webhook",
        "schedule",
        "payload",
        "retry_conf",
        "headers",
        "include_in_metadata",
        "comment",
        "request_transform",
        "response_transform",
    ] {
        if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
            trigger.insert(key.into(), v.clone());
        }
    }
    let trigger = Value::Object(trigger);
    // Read as the start-up reader reads it: a wrong field is refused here, with
    // its path, not found at the next start.
    match serde_json::from_value::<CronTriggerConfig>(trigger.clone()) {
        Err(e) => return Err(Refusal::new("parse-failed", e.to_string(), "$.args")),
        Ok(c) => {
            if let Err(e) = grafton_engine::schedules::Schedule::parse(&c.schedule) {
                return Err(Refusal::new("parse-failed", e, "$.args.schedule"));
            }
        }
    }
    let replace = args.get("replace") == Some(&Value::Bool(true));
    let crons = crons(doc)?;
    match position(crons, &name) {
        Some(i) if replace => crons[i] = trigger,
        Some(_) => {
            return Err(Refusal::new(
                "already-exists",
                format!("cron trigger with name: {name} already exists"),
                "$.args",
            ))
        }
        None if replace => {
            return Err(Refusal::new(
                "not-exists",
                format!("cron trigger with name: {name} does not exist"),
                "$.args",
            ))
        }
        None => crons.push(trigger),
    }
    Ok(())
}

/// `delete_cron_trigger`: `{name}`.
pub fn delete(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let crons = crons(doc)?;
    let Some(i) = position(crons, &name) else {
        return Err(Refusal::new(
            "not-exists",
            format!("cron trigger with name: {name} does not exist"),
            "$.args",
        ));
    };
    crons.remove(i);
    if crons.is_empty() {
        doc.as_object_mut().map(|d| d.remove("cron_triggers"));
    }
    Ok(())
}

/// Whether a cron trigger is shown by `export_metadata` (Hasura's
/// `include_in_metadata`).
fn included(cron: &Value) -> bool {
    cron.get("include_in_metadata") == Some(&Value::Bool(true))
}

/// The document `export_metadata` answers: without the cron triggers whose
/// `include_in_metadata` is false (kept, and listed by `get_cron_triggers`).
pub fn exported(mut doc: Value) -> Value {
    if let Some(Value::Array(crons)) = doc.get_mut("cron_triggers") {
        crons.retain(included);
        if crons.is_empty() {
            doc.as_object_mut().map(|d| d.remove("cron_triggers"));
        }
    }
    doc
}

/// Puts `old`'s cron triggers that export does not show into `new` (a replaced
/// document keeps them, as Hasura's); one `new` names too is refused.
pub fn keep_hidden(old: &Value, new: &mut Value) -> Result<(), Refusal> {
    let hidden: Vec<Value> = (old.get("cron_triggers").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter(|c| !included(c))
        .cloned()
        .collect();
    if hidden.is_empty() {
        return Ok(());
    }
    let crons = crons(new)?;
    for cron in hidden {
        let name = cron.get("name").and_then(Value::as_str).unwrap_or_default();
        if position(crons, name).is_some() {
            return Err(Refusal::new(
                "already-exists",
                format!(
                    "cron trigger with name {name} already exists as a cron trigger with \"included_in_metadata\" as false"
                ),
                "$.args",
            ));
        }
        crons.push(cron);
    }
    Ok(())
}
