//! The scheduled events' commands (`create_scheduled_event`,
//! `delete_scheduled_event`, `get_scheduled_events`,
//! `get_scheduled_event_invocations`), answered from the database through the
//! events' machinery (PostgreSQL only).

use crate::event_log::db_refusal;
use crate::service::Metadata;
use crate::Refusal;
use grafton_events::scheduled_api::{Kind, NewEvent};
use serde_json::{json, Value};

/// `args` read as a `T`, or Hasura's `parse-failed` naming the field.
fn read<T: serde::de::DeserializeOwned>(args: &Value) -> Result<T, Refusal> {
    serde_json::from_value(args.clone()).map_err(|e| Refusal::parse(e.to_string()))
}

/// `text` as an instant, written RFC 3339 in UTC: ISO 8601 with an offset, or
/// without one (UTC, as Hasura reads it), with `T` or a space; years 1 to 9999.
fn instant(text: &str) -> Option<String> {
    use chrono::{DateTime, NaiveDateTime, Utc};
    let t = text.trim();
    let at: DateTime<Utc> = match DateTime::parse_from_rfc3339(t) {
        Ok(at) => at.with_timezone(&Utc),
        Err(_) => ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())?
            .and_utc(),
    };
    let year = chrono::Datelike::year(&at);
    (1..=9999)
        .contains(&year)
        .then(|| at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}

impl Metadata {
    /// One scheduled-event command.
    pub(crate) async fn scheduled_events(
        &self,
        kind: &str,
        args: &Value,
    ) -> Result<Value, Refusal> {
        let events = self.events().filter(|e| e.schedules_served());
        let Some(events) = events else {
            return Err(Refusal::new(
                "not-supported",
                "scheduled events are served on PostgreSQL",
                "$.type",
            ));
        };
        let of = |args: &Value| -> Result<Kind, Refusal> {
            let kind = args.get("type").cloned().unwrap_or(json!("one_off"));
            serde_json::from_value(kind).map_err(|_| {
                Refusal::new(
                    "parse-failed",
                    "type: expected \"one_off\" or \"cron\"",
                    "$.args.type",
                )
            })
        };
        let name = |k: &str| args.get(k).and_then(Value::as_str);
        // `limit` and `offset` at the top (Hasura's), or in a `pagination` object.
        let page = |args: &Value| {
            let p = args.get("pagination");
            let n = |k: &str, d: u64| {
                (args.get(k).or_else(|| p.and_then(|p| p.get(k))))
                    .and_then(Value::as_u64)
                    .unwrap_or(d)
            };
            (n("limit", 100), n("offset", 0))
        };
        let trigger = name("trigger_name");
        if let Some(trigger) = trigger.filter(|_| kind != "create_scheduled_event") {
            let (doc, _) = self.document().await?;
            let crons = doc.get("cron_triggers").and_then(Value::as_array);
            let known = (crons.into_iter().flatten())
                .any(|c| c.get("name").and_then(Value::as_str) == Some(trigger));
            if !known {
                return Err(Refusal::new(
                    "not-exists",
                    format!("cron trigger with name: {trigger} does not exist"),
                    "$.args.trigger_name",
                ));
            }
        }
        let with_count = args.get("get_rows_count") == Some(&Value::Bool(true));
        match kind {
            "create_scheduled_event" => {
                let mut new: NewEvent = read(args)?;
                let Some(at) = instant(&new.schedule_at) else {
                    return Err(Refusal::new(
                        "parse-failed",
                        format!(
                            "schedule_at: '{}' is not an ISO 8601 time (UTC when it has no offset)",
                            new.schedule_at
                        ),
                        "$.args.schedule_at",
                    ));
                };
                new.schedule_at = at;
                let id = events.create_scheduled(&new).await.map_err(db_refusal)?;
                Ok(json!({"message": "success", "event_id": id}))
            }
            "delete_scheduled_event" => {
                // As Hasura's: an id that is not there is deleted too.
                let id = crate::document::text(args, "event_id")?;
                (events.delete_scheduled(of(args)?, id).await).map_err(db_refusal)?;
                Ok(json!({"message": "success"}))
            }
            "get_scheduled_events" => {
                let statuses: Vec<String> = match args.get("status") {
                    Some(v) if !v.is_null() => read(v)?,
                    _ => Vec::new(),
                };
                let known = ["scheduled", "locked", "delivered", "error", "dead"];
                if let Some(s) = statuses.iter().find(|s| !known.contains(&s.as_str())) {
                    return Err(Refusal::new(
                        "parse-failed",
                        format!("status: '{s}' is not one of {}", known.join(", ")),
                        "$.args.status",
                    ));
                }
                events
                    .scheduled(of(args)?, trigger, &statuses, page(args), with_count)
                    .await
                    .map_err(db_refusal)
            }
            _ => {
                let event = name("event_id");
                events
                    .scheduled_invocations(of(args)?, event, trigger, page(args), with_count)
                    .await
                    .map_err(db_refusal)
            }
        }
    }
}
