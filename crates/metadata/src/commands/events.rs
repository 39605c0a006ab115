//! Event triggers in the metadata: `pg_create_event_trigger` (Hasura's flat args,
//! `replace` to change one) and `pg_delete_event_trigger`. The trigger is checked
//! by building the result (its table served, its columns there).

use crate::document::{list, source, text, tracked_table};
use crate::Refusal;
use serde_json::{json, Map, Value};

/// Where the trigger named `name` is: its table's index and its own.
fn find(tables: &[Value], name: &str) -> Option<(usize, usize)> {
    tables.iter().enumerate().find_map(|(t, entry)| {
        let triggers = entry.get("event_triggers")?.as_array()?;
        let i = triggers
            .iter()
            .position(|e| e.get("name").and_then(Value::as_str) == Some(name))?;
        Some((t, i))
    })
}

/// `pg_create_event_trigger`: `{name, table, webhook | webhook_from_env, insert?,
/// update?, delete?, enable_manual?, retry_conf?, headers?, replace?, …}`.
pub fn create(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let valid = !name.is_empty()
        && name.len() <= 42
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(Refusal::new(
            "parse-failed",
            "an event trigger's name is 1 to 42 letters, digits, '_' or '-'",
            "$.args.name",
        ));
    }
    let replace = args.get("replace") == Some(&Value::Bool(true));
    let tables = list(source(doc, args)?, "tables")?;
    if let Some((t, i)) = find(tables, &name) {
        if !replace {
            return Err(Refusal::new(
                "already-exists",
                format!("Event trigger with name \"{name}\" already exists"),
                "$.args",
            ));
        }
        if let Some(Value::Array(triggers)) = tables[t].get_mut("event_triggers") {
            triggers.remove(i);
        }
    }
    let mut definition = Map::new();
    for op in ["insert", "update", "delete"] {
        if let Some(spec) = args.get(op).filter(|s| !s.is_null()) {
            definition.insert(op.into(), spec.clone());
        }
    }
    let manual = args
        .get("enable_manual")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    definition.insert("enable_manual".into(), json!(manual));
    let mut trigger = json!({"name": name, "definition": definition});
    for key in [
        "retry_conf",
        "webhook",
        "webhook_from_env",
        "headers",
        "request_transform",
        "response_transform",
        "cleanup_config",
    ] {
        if let Some(v) = args.get(key).filter(|v| !v.is_null()) {
            trigger[key] = v.clone();
        }
    }
    if trigger.get("retry_conf").is_none() {
        trigger["retry_conf"] = json!({"num_retries": 0, "interval_sec": 10, "timeout_sec": 60});
    }
    list(tracked_table(doc, args)?, "event_triggers")?.push(trigger);
    Ok(())
}

/// `pg_delete_event_trigger`: `{name}`.
pub fn delete(doc: &mut Value, args: &Value) -> Result<(), Refusal> {
    let name = text(args, "name")?.to_owned();
    let tables = list(source(doc, args)?, "tables")?;
    let Some((t, i)) = find(tables, &name) else {
        return Err(Refusal::new(
            "not-exists",
            format!("event trigger \"{name}\" does not exist"),
            "$.args",
        ));
    };
    if let Some(Value::Array(triggers)) = tables[t].get_mut("event_triggers") {
        triggers.remove(i);
        if triggers.is_empty() {
            if let Some(entry) = tables[t].as_object_mut() {
                entry.remove("event_triggers");
            }
        }
    }
    Ok(())
}

/// `pause_event_trigger_cleanups` / `resume_event_trigger_cleanups`:
/// `{event_triggers: {sources: "*" | [source]}}` (every trigger with a
/// `cleanup_config` there) or `{event_triggers: [{source_name, event_triggers:
/// [name]}]}` (those, each needing a `cleanup_config`); sets `paused`.
pub fn pause_cleanups(doc: &mut Value, args: &Value, paused: bool) -> Result<(), Refusal> {
    let which = args.get("event_triggers").cloned().unwrap_or(Value::Null);
    let mut named: Vec<(Value, Option<String>)> = Vec::new();
    match &which {
        Value::Object(o) => {
            let sources: Vec<String> = match o.get("sources") {
                Some(Value::String(s)) if s == "*" => vec!["default".into()],
                Some(Value::Array(list)) => list
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect(),
                _ => {
                    return Err(Refusal::parse(
                        "event_triggers.sources: expected \"*\" or a list",
                    ))
                }
            };
            for s in sources {
                named.push((json!({"source": s}), None));
            }
        }
        Value::Array(list) => {
            for entry in list {
                let source = entry
                    .get("source_name")
                    .cloned()
                    .unwrap_or(json!("default"));
                let names = entry.get("event_triggers").and_then(Value::as_array);
                for n in names.into_iter().flatten().filter_map(Value::as_str) {
                    named.push((json!({"source": source}), Some(n.to_owned())));
                }
            }
        }
        _ => return Err(Refusal::parse("key \"event_triggers\" not found")),
    }
    for (source_args, name) in named {
        let tables = list(source(doc, &source_args)?, "tables")?;
        let Some(name) = name else {
            // A whole source: each trigger that has a clean-up.
            for table in tables.iter_mut() {
                let triggers = table
                    .get_mut("event_triggers")
                    .and_then(Value::as_array_mut);
                for t in triggers.into_iter().flatten() {
                    if let Some(c) = t.get_mut("cleanup_config").filter(|c| c.is_object()) {
                        c["paused"] = json!(paused);
                    }
                }
            }
            continue;
        };
        let Some((t, i)) = find(tables, &name) else {
            return Err(Refusal::new(
                "not-exists",
                format!("event trigger {name} does not exist"),
                "$.args",
            ));
        };
        let trigger = &mut tables[t]["event_triggers"][i];
        match trigger.get_mut("cleanup_config").filter(|c| c.is_object()) {
            Some(c) => c["paused"] = json!(paused),
            None => {
                return Err(Refusal::new(
                    "not-exists",
                    format!("cleanup config does not exist for {name}"),
                    "$.args",
                ))
            }
        }
    }
    Ok(())
}
