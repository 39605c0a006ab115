//! The commands that change the metadata document, each a plain function of the
//! document and the command's args; `bulk` applies its commands in order and
//! stops at the first refusal (nothing of it is kept then). Whether the result
//! can be served is decided afterwards, by building it (`service.rs`).

use crate::Refusal;
use grafton_schema::inconsistent::Inconsistency;
use serde_json::{json, Value};

pub use crons::exported;
pub use drop::{dependent, object as drop_object};

mod actions;
pub(crate) mod remote_schemas;
mod remote_type_relationships;
pub(crate) use actions::cleared as cleared_actions;
mod crons;
mod drop;
mod events;
mod functions;
mod permissions;
mod project;
mod relationships;
mod tables;

/// What applying a command asks of the service besides keeping the document.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The command's answer (for `bulk`, one per command).
    pub answer: Value,
    /// `replace_metadata` with `allow_inconsistent_metadata`: keep the document even
    /// when parts of it cannot be served, and answer with those parts.
    pub allow_inconsistent: bool,
    /// A `replace_metadata`: refused whole if anything cannot be served (unless
    /// allowed).
    pub replaced: bool,
    /// A v2 `replace_metadata` (`{metadata, …}` or `"version": 2`): answered with
    /// `{is_consistent, inconsistent_objects}`.
    pub answer_consistency: bool,
    /// A drop: what it leaves dangling is a `dependency-error` (`Some(false)`), or
    /// dropped too (`Some(true)`: `cascade`).
    pub drops: Option<bool>,
}

fn success() -> Value {
    json!({"message": "success"})
}

/// Whether `kind` changes the metadata (so it needs a writable store).
pub fn writes(kind: &str) -> bool {
    matches!(
        kind,
        "bulk" | "replace_metadata" | "clear_metadata" | "drop_inconsistent_metadata"
    ) || edit(kind).is_some()
}

/// Whether `kind` drops an object (so `cascade` applies).
fn drops(kind: &str) -> bool {
    matches!(kind, "pg_untrack_table" | "pg_untrack_function")
        || kind.starts_with("pg_drop_")
        || (kind.starts_with("drop_") && kind != "drop_inconsistent_metadata")
}

/// The event log's commands (answered from the database, `event_log.rs`).
pub(crate) const EVENT_LOG: &[&str] = &[
    "pg_invoke_event_trigger",
    "invoke_event_trigger",
    "pg_redeliver_event",
    "redeliver_event",
    "pg_get_event_logs",
    "get_event_logs",
    "pg_get_event_invocation_logs",
    "get_event_invocation_logs",
    "pg_get_event_by_id",
    "get_event_by_id",
    "cleanup_event_trigger_logs",
    "get_cron_triggers",
    "create_scheduled_event",
    "delete_scheduled_event",
    "get_scheduled_events",
    "get_scheduled_event_invocations",
];

/// Whether any command of a bulk's `args` changes the metadata.
pub fn writes_any(args: &Value) -> bool {
    let Some(items) = args.as_array() else {
        return true;
    };
    items.iter().any(|item| match envelope(item) {
        Ok(("bulk", inner)) => writes_any(inner),
        Ok((kind, _)) => writes(kind),
        Err(_) => false,
    })
}

/// The commands answered without a change.
const READS: &[&str] = &[
    "export_metadata",
    "get_catalog_state",
    "set_catalog_state",
    "get_inconsistent_metadata",
    "reload_metadata",
    "bulk_keep_going",
];

type Edit = fn(&mut Value, &Value) -> Result<(), Refusal>;

/// The edit behind a command that changes one object.
fn edit(kind: &str) -> Option<Edit> {
    Some(match kind {
        "pg_track_table" => tables::track,
        "pg_untrack_table" => tables::untrack,
        "pg_set_table_customization" => tables::customize,
        "pg_set_table_is_enum" => tables::set_is_enum,
        "pg_create_object_relationship" => {
            |d, a| relationships::create(d, a, "object_relationships")
        }
        "pg_create_array_relationship" => |d, a| relationships::create(d, a, "array_relationships"),
        "pg_drop_relationship" => relationships::drop,
        "pg_create_remote_relationship" | "create_remote_relationship" => {
            |d, a| relationships::put_remote(d, a, false)
        }
        "pg_update_remote_relationship" | "update_remote_relationship" => {
            |d, a| relationships::put_remote(d, a, true)
        }
        "pg_delete_remote_relationship" | "delete_remote_relationship" => {
            relationships::delete_remote
        }
        "pg_rename_relationship" => relationships::rename,
        "pg_set_relationship_comment" => relationships::comment,
        "pg_create_select_permission" => |d, a| permissions::create(d, a, "select"),
        "pg_create_insert_permission" => |d, a| permissions::create(d, a, "insert"),
        "pg_create_update_permission" => |d, a| permissions::create(d, a, "update"),
        "pg_create_delete_permission" => |d, a| permissions::create(d, a, "delete"),
        "pg_drop_select_permission" => |d, a| permissions::drop(d, a, "select"),
        "pg_drop_insert_permission" => |d, a| permissions::drop(d, a, "insert"),
        "pg_drop_update_permission" => |d, a| permissions::drop(d, a, "update"),
        "pg_drop_delete_permission" => |d, a| permissions::drop(d, a, "delete"),
        "pg_set_permission_comment" => permissions::comment,
        "pg_track_function" => functions::track,
        "pg_untrack_function" => functions::untrack,
        "pg_create_function_permission" => functions::permit,
        "pg_drop_function_permission" => functions::forbid,
        "pg_add_computed_field" => functions::add_computed,
        "pg_drop_computed_field" => functions::drop_computed,
        "add_inherited_role" => project::add_inherited_role,
        "drop_inherited_role" => project::drop_inherited_role,
        "set_api_limits" => project::set_api_limits,
        "remove_api_limits" => project::remove_api_limits,
        "create_query_collection" => project::create_collection,
        "drop_query_collection" => project::drop_collection,
        "add_query_to_collection" => project::add_query,
        "drop_query_from_collection" => project::drop_query,
        "add_collection_to_allowlist" => |d, a| project::allow(d, a).map(|_| ()),
        "drop_collection_from_allowlist" => project::disallow,
        "update_scope_of_collection_in_allowlist" => project::rescope,
        "pg_create_event_trigger" => events::create,
        "pg_delete_event_trigger" => events::delete,
        "pause_event_trigger_cleanups" => |d, a| events::pause_cleanups(d, a, true),
        "resume_event_trigger_cleanups" => |d, a| events::pause_cleanups(d, a, false),
        "create_action" => actions::create,
        "update_action" => actions::update,
        "drop_action" => actions::drop,
        "create_action_permission" => actions::permit,
        "drop_action_permission" => actions::forbid,
        "set_custom_types" => actions::set_custom_types,
        "create_remote_schema_remote_relationship" => {
            |d, a| remote_type_relationships::put(d, a, false)
        }
        "update_remote_schema_remote_relationship" => {
            |d, a| remote_type_relationships::put(d, a, true)
        }
        "delete_remote_schema_remote_relationship" => remote_type_relationships::delete,
        "add_remote_schema" => remote_schemas::add,
        "update_remote_schema" => remote_schemas::update,
        "remove_remote_schema" => remote_schemas::remove,
        "add_remote_schema_permissions" => remote_schemas::permit,
        "drop_remote_schema_permissions" => remote_schemas::forbid,
        "create_cron_trigger" => crons::create,
        "delete_cron_trigger" => crons::delete,
        _ => return None,
    })
}

/// The command's `type` and `args`.
pub fn envelope(body: &Value) -> Result<(&str, &Value), Refusal> {
    let Some(kind) = body.get("type").and_then(Value::as_str) else {
        return Err(Refusal::new(
            "parse-failed",
            "the request needs a \"type\" string and its \"args\"",
            "$",
        ));
    };
    Ok((kind, body.get("args").unwrap_or(&Value::Null)))
}

/// Applies the command `body` to `doc`; `left_out` is what is not served now
/// (`drop_inconsistent_metadata` drops it).
pub fn apply(
    doc: &mut Value,
    body: &Value,
    left_out: &[Inconsistency],
) -> Result<Outcome, Refusal> {
    let (kind, args) = envelope(body)?;
    match kind {
        "bulk" => {
            let Some(items) = args.as_array() else {
                return Err(Refusal::parse("bulk takes a list of commands as its args"));
            };
            let mut outcome = Outcome::default();
            let mut answers = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let inner =
                    apply(doc, item, left_out).map_err(|r| r.within(&format!("$.args[{i}]")))?;
                outcome.allow_inconsistent |= inner.allow_inconsistent;
                outcome.drops = match (outcome.drops, inner.drops) {
                    (Some(a), Some(b)) => Some(a || b),
                    (a, b) => a.or(b),
                };
                outcome.replaced |= inner.replaced;
                outcome.answer_consistency |= inner.answer_consistency;
                answers.push(inner.answer);
            }
            outcome.answer = Value::Array(answers);
            Ok(outcome)
        }
        "replace_metadata" => {
            // v2 (`{metadata, allow_inconsistent_metadata}`) or v1 (the metadata).
            let (metadata, allow, v2) = match args.get("metadata") {
                Some(m) if m.is_object() => (
                    m.clone(),
                    args.get("allow_inconsistent_metadata") == Some(&Value::Bool(true)),
                    true,
                ),
                _ => (args.clone(), false, false),
            };
            let v2 = v2 || body.get("version").and_then(Value::as_u64) == Some(2);
            if !metadata.is_object() {
                return Err(Refusal::parse("the metadata must be an object"));
            }
            grafton_schema::hasura::to_config(&metadata)
                .map_err(|e| Refusal::new("parse-failed", e, "$.args"))?;
            let mut metadata = metadata;
            crons::keep_hidden(doc, &mut metadata)?;
            *doc = metadata;
            Ok(Outcome {
                answer: success(),
                allow_inconsistent: allow,
                replaced: true,
                answer_consistency: v2,
                drops: None,
            })
        }
        "drop_inconsistent_metadata" => {
            for i in left_out {
                drop_object(doc, i);
            }
            // What cannot be dropped (the first source's own settings) stays reported.
            Ok(Outcome {
                answer: success(),
                allow_inconsistent: true,
                ..Outcome::default()
            })
        }
        "clear_metadata" => {
            *doc = crate::document::cleared(doc);
            Ok(Outcome {
                answer: success(),
                ..Outcome::default()
            })
        }
        "add_collection_to_allowlist" => {
            // Already listed: Hasura's 200 with a message, nothing changed.
            let answer = project::allow(doc, args)?.unwrap_or_else(success);
            Ok(Outcome {
                answer,
                ..Outcome::default()
            })
        }
        other => match edit(other) {
            Some(edit) => {
                edit(doc, args)?;
                let cascade = args.get("cascade") == Some(&Value::Bool(true));
                Ok(Outcome {
                    answer: success(),
                    drops: drops(other).then_some(cascade),
                    ..Outcome::default()
                })
            }
            None => Err(unserved(other)),
        },
    }
}

/// The refusal of a command that is not applied here: one of Hasura's Grafton
/// does not serve yet (by name), or one Hasura does not have.
pub fn unserved(kind: &str) -> Refusal {
    if READS.contains(&kind) {
        Refusal::new(
            "not-supported",
            format!("'{kind}' is answered alone or in a bulk of reads, not in a bulk that changes the metadata"),
            "$.type",
        )
    } else if KNOWN.contains(&kind) {
        Refusal::new(
            "not-supported",
            format!("Grafton's metadata API does not serve '{kind}' yet"),
            "$.type",
        )
    } else {
        Refusal::new(
            "parse-failed",
            format!("unknown metadata command \"{kind}\""),
            "$",
        )
    }
}

/// Commands of Hasura's metadata API Grafton does not serve yet (refused by name).
const KNOWN: &[&str] = &[
    "test_webhook_transform",
    "bulk_atomic",
    "pg_track_tables",
    "pg_untrack_tables",
    "pg_set_table_custom_fields",
    "pg_add_source",
    "pg_drop_source",
    "pg_update_source",
    "rename_source",
    "pg_get_viable_indexes",
    "pg_suggest_relationships",
    "create_rest_endpoint",
    "drop_rest_endpoint",
    "set_graphql_schema_introspection_options",
    "add_host_to_tls_allowlist",
    "drop_host_from_tls_allowlist",
    "set_query_tags",
    "set_opentelemetry_config",
    "set_opentelemetry_status",
    "set_metrics_config",
    "remove_metrics_config",
    "dump_internal_state",
    "get_source_tables",
    "get_table_info",
    "list_source_kinds",
];
