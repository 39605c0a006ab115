//! The event log's commands (`pg_invoke_event_trigger`, `pg_redeliver_event`,
//! `pg_get_event_logs`, `pg_get_event_invocation_logs`, `pg_get_event_by_id`;
//! also without their `pg_`), answered from the database through the events'
//! machinery (PostgreSQL only).

use crate::service::Metadata;
use crate::Refusal;
use serde_json::{json, Value};

pub(crate) fn db_refusal(e: grafton_execute::ExecuteError) -> Refusal {
    Refusal {
        server_fault: true,
        ..Refusal::new("unexpected", format!("the event log: {e}"), "$")
    }
}

impl Metadata {
    /// After a change: a removed remote is introspected afresh should it come
    /// back; dropped actions' calls are deleted (`clear_action_data`).
    pub(crate) async fn after_change(&self, body: &Value) {
        let (kind, args) = (body.get("type"), body.get("args"));
        if kind.and_then(Value::as_str) == Some("remove_remote_schema") {
            if let Some(name) = args.and_then(|a| a.get("name")).and_then(Value::as_str) {
                self.engine.remote_cache().forget(name);
            }
        }
        self.clear_action_data(body).await;
    }

    /// After a change that dropped actions with `clear_data`: their calls are
    /// deleted from the asynchronous actions' log (the change stands if this
    /// fails; it is logged).
    async fn clear_action_data(&self, body: &Value) {
        for name in crate::commands::cleared_actions(body) {
            let db = self.engine.database();
            if let Err(e) = grafton_engine::action_log::clear(db, &name).await {
                tracing::warn!(action = %name, "clearing the dropped action's calls: {e}");
            }
        }
    }

    /// `reload_remote_schema` (its introspection fetched again, the schemas
    /// rebuilt) or `introspect_remote_schema` (the remote's introspection answer
    /// as received).
    pub(crate) async fn remote_schema(&self, kind: &str, args: &Value) -> Result<Value, Refusal> {
        let name = crate::document::text(args, "name")?.to_owned();
        let (doc, _) = self.document().await?;
        let remotes = doc.get("remote_schemas").and_then(Value::as_array);
        let found = remotes.and_then(|r| {
            let i = crate::commands::remote_schemas::position(r, &name)?;
            r.get(i)?.get("definition").cloned()
        });
        let Some(definition) = found else {
            return Err(match kind {
                "introspect_remote_schema" => Refusal::new(
                    "not-exists",
                    format!("remote schema: \"{name}\" not found"),
                    "$.args",
                ),
                _ => crate::commands::remote_schemas::missing(&name),
            });
        };
        let cache = self.engine.remote_cache();
        if kind == "reload_remote_schema" {
            cache.forget(&name);
            if let Err(e) = self.reload("reload_remote_schema").await {
                return Err(Refusal::new("reload-failed", e.to_string(), "$"));
            }
            return Ok(json!({"message": "success"}));
        }
        let definition = serde_json::from_value(definition).ok();
        match definition.and_then(|d| cache.get(&name, &d)) {
            Some(introspected) => Ok(introspected.raw.clone()),
            None => Err(Refusal::new(
                "remote-schema-error",
                format!("the remote schema \"{name}\" could not be introspected (see get_inconsistent_metadata)"),
                "$.args",
            )),
        }
    }

    /// One event-log command.
    pub(crate) async fn event_log(&self, kind: &str, args: &Value) -> Result<Value, Refusal> {
        if kind == "get_cron_triggers" {
            let (doc, _) = self.document().await?;
            let crons = doc.get("cron_triggers").cloned();
            return Ok(json!({"cron_triggers": crons.unwrap_or_else(|| json!([]))}));
        }
        if kind.contains("scheduled_event") {
            return self.scheduled_events(kind, args).await;
        }
        let Some(events) = self.events() else {
            return Err(Refusal::new(
                "not-supported",
                "event triggers are served on PostgreSQL",
                "$.type",
            ));
        };
        if kind == "cleanup_event_trigger_logs" {
            return clean_up(events, args).await;
        }
        let number =
            |key: &str, default: u64| args.get(key).and_then(Value::as_u64).unwrap_or(default);
        let name = || crate::document::text(args, "name").map(str::to_owned);
        let event_id = || crate::document::text(args, "event_id").map(str::to_owned);
        match kind.trim_start_matches("pg_") {
            "invoke_event_trigger" => {
                let name = name()?;
                let row = args.get("payload").cloned().unwrap_or_else(|| json!({}));
                match events.invoke(&name, &row).await.map_err(db_refusal)? {
                    Ok(id) => Ok(json!({"event_id": id})),
                    Err(why) => Err(Refusal::new("not-supported", why, "$.args.name")),
                }
            }
            "redeliver_event" => {
                let id = event_id()?;
                match events.redeliver(&id).await.map_err(db_refusal)? {
                    true => Ok(json!({"message": "success"})),
                    false => Err(Refusal::new(
                        "not-exists",
                        format!("event \"{id}\" does not exist"),
                        "$.args.event_id",
                    )),
                }
            }
            "get_event_logs" => {
                let status = args.get("status").and_then(Value::as_str).unwrap_or("all");
                let (limit, offset) = (number("limit", 100), number("offset", 0));
                events
                    .logs(&name()?, status, limit, offset)
                    .await
                    .map_err(db_refusal)
            }
            "get_event_invocation_logs" => {
                let (limit, offset) = (number("limit", 100), number("offset", 0));
                events
                    .invocations(&name()?, limit, offset)
                    .await
                    .map_err(db_refusal)
            }
            _ => {
                let limit = number("invocation_log_limit", 100);
                let offset = number("invocation_log_offset", 0);
                events
                    .event(&event_id()?, limit, offset)
                    .await
                    .map_err(db_refusal)
            }
        }
    }
}

/// `cleanup_event_trigger_logs`: `{event_trigger_name, batch_size, clear_older_than,
/// timeout, clean_invocation_logs}`, run now.
async fn clean_up(events: &grafton_events::Events, args: &Value) -> Result<Value, Refusal> {
    let name = crate::document::text(args, "event_trigger_name")?;
    let served = events.serves_trigger(name);
    if !served {
        return Err(Refusal::new(
            "not-exists",
            format!("event trigger {name} does not exist"),
            "$.args.event_trigger_name",
        ));
    }
    let cleanup: grafton_events::trigger_cleanup::LogCleanup =
        serde_json::from_value(args.clone()).map_err(|e| Refusal::parse(e.to_string()))?;
    events
        .clean_trigger(name, &cleanup)
        .await
        .map_err(db_refusal)
}
