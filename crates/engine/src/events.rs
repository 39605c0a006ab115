//! Which event triggers of the config are served: those on a table served, whose
//! columns exist and whose environment variables are set (on PostgreSQL and
//! SQLite alike: the database's triggers capture the writes of every client).
//! The others are left out and reported, never dropped in silence.

use grafton_catalog::{Backend, ScalarKind};
use grafton_schema::config::{EventColumns, EventTriggerConfig};
use grafton_schema::inconsistent::{Inconsistency, ObjectKind};
use grafton_schema::{Config, SchemaModel};

/// An event trigger served: its table as the database names it, and its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedTrigger {
    /// The table's schema.
    pub schema: String,
    /// The table's name.
    pub table: String,
    /// The table's columns, in order (what a payload holds).
    pub columns: Vec<String>,
    /// Those of them that are booleans (SQLite stores 1 and 0).
    pub booleans: Vec<String>,
    /// Those of them that hold JSON (SQLite stores text).
    pub jsons: Vec<String>,
    /// Its PostGIS columns, with the schema of PostGIS's functions: a payload
    /// carries them as GeoJSON, as Hasura's does.
    pub spatial: Vec<(String, String)>,
    /// The trigger.
    pub config: EventTriggerConfig,
}

/// The triggers of `config` served over `model`, and those left out.
pub(crate) fn served(
    config: &Config,
    model: &SchemaModel,
    backend: Backend,
) -> (Vec<ServedTrigger>, Vec<Inconsistency>) {
    let (mut served, mut left_out) = (Vec::new(), Vec::new());
    let default_schema = match backend {
        Backend::Postgres => "public",
        Backend::Sqlite => "main",
    };
    for (key, table) in &config.tables {
        for (name, trigger) in &table.event_triggers {
            let refuse =
                |why: String| Inconsistency::of_table(ObjectKind::EventTrigger, key, name, why);
            let (schema, bare) = key.split_once('.').unwrap_or((default_schema, key));
            let found = (model.tables.iter())
                .map(|t| &model.catalog.tables[t.catalog_index])
                .find(|t| t.schema == schema && t.name == bare);
            let Some(found) = found else {
                left_out.push(refuse(format!("its table '{key}' is not served")));
                continue;
            };
            if found.kind != grafton_catalog::TableKind::Table {
                // A view takes no row triggers on either database: one failed
                // install would hold up every other trigger's.
                left_out.push(refuse(format!(
                    "'{key}' is a view: event triggers are on tables"
                )));
                continue;
            }
            if !valid_name(name) {
                left_out.push(refuse(
                    "its name is not 1 to 42 letters, digits, '_' or '-'".into(),
                ));
                continue;
            }
            let columns: Vec<String> = found.columns.iter().map(|c| c.name.clone()).collect();
            let of = |kinds: &[ScalarKind]| -> Vec<String> {
                (found.columns.iter())
                    .filter(|c| kinds.contains(&c.scalar))
                    .map(|c| c.name.clone())
                    .collect()
            };
            let booleans = of(&[ScalarKind::Boolean]);
            let jsons = of(&[ScalarKind::Json, ScalarKind::Jsonb]);
            let postgis = model.catalog.extension_schema("geometry");
            let spatial = (of(&[ScalarKind::Geometry, ScalarKind::Geography]).into_iter())
                .map(|c| (c, postgis.clone()))
                .collect();
            // Every column it names (what fires an update, what a payload holds)
            // must be the table's: a missing one would fail every write to it.
            let d = &trigger.definition;
            let mut named = Vec::new();
            for op in [&d.insert, &d.update, &d.delete].into_iter().flatten() {
                for c in [Some(&op.columns), op.payload.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    if let EventColumns::Some(list) = c {
                        named.extend(list.iter().cloned());
                    }
                }
            }
            if let Some(column) = named.into_iter().find(|c| !columns.contains(c)) {
                left_out.push(refuse(format!(
                    "its column '{column}' is not a column of '{key}'"
                )));
                continue;
            }
            let cleanup = trigger.cleanup_config.as_ref();
            if let Some(Err(e)) = cleanup.map(|c| crate::schedules::Schedule::parse(&c.schedule)) {
                left_out.push(refuse(format!("its cleanup_config: {e}")));
                continue;
            }
            if let Some(var) = missing_env(trigger) {
                left_out.push(refuse(format!(
                    "the environment variable {var} it reads is not set"
                )));
                continue;
            }
            served.push(ServedTrigger {
                schema: found.schema.clone(),
                table: found.name.clone(),
                columns,
                booleans,
                jsons,
                spatial,
                config: trigger.clone(),
            });
        }
    }
    (served, left_out)
}

/// The first environment variable the trigger's webhook or headers read that is
/// not set: such a trigger could deliver nothing (as Hasura, it is inconsistent).
fn missing_env(trigger: &EventTriggerConfig) -> Option<String> {
    let mut vars: Vec<String> = Vec::new();
    if let Some(var) = &trigger.webhook_from_env {
        vars.push(var.clone());
    }
    vars.extend(crate::webhooks::template_vars(
        trigger.webhook.as_deref().unwrap_or(""),
    ));
    vars.extend(
        trigger
            .headers
            .iter()
            .filter_map(|h| h.value_from_env.clone()),
    );
    vars.into_iter().find(|v| std::env::var(v).is_err())
}

/// Hasura's rule for a trigger's name: 1 to 42 letters, digits, `_` or `-`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 42
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Hasura's `trace_context` of an event: `{trace_id, span_id, sampling_state}`
/// from a W3C `traceparent`, or fresh ids (and no sampling decision) without one.
pub fn trace_context(traceparent: Option<&str>) -> serde_json::Value {
    let parsed = traceparent.and_then(|t| {
        let parts: Vec<&str> = t.trim().split('-').collect();
        let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
        match parts.as_slice() {
            [_, trace, span, flags] if hex(trace, 32) && hex(span, 16) && hex(flags, 2) => {
                let sampled = u8::from_str_radix(flags, 16).is_ok_and(|f| f & 1 == 1);
                Some((trace.to_lowercase(), span.to_lowercase(), sampled))
            }
            _ => None,
        }
    });
    match parsed {
        Some((trace, span, sampled)) => serde_json::json!({
            "trace_id": trace, "span_id": span,
            "sampling_state": if sampled { "1" } else { "0" },
        }),
        None => serde_json::json!({
            "trace_id": format!("{:016x}{:016x}", random_u64(), random_u64()),
            "span_id": format!("{:016x}", random_u64()),
        }),
    }
}

/// 64 random bits, cheaply: a randomly keyed hash of a counter (ids, sampling;
/// nothing secret).
pub fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let mut h = KEY
        .get_or_init(std::collections::hash_map::RandomState::new)
        .build_hasher();
    h.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    h.finish()
}
