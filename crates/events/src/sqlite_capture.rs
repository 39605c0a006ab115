//! Capturing writes on SQLite: the event log in the same file
//! (`grafton_catalog_event_log`, with its invocation logs), and per event trigger
//! one `AFTER … FOR EACH ROW` trigger per operation writing one event per row
//! changed, in the writing transaction, whichever client wrote. A mutation's
//! session and trace come from `grafton_catalog_event_session`, the one row its
//! transaction writes first and deletes last (SQLite has one writer at a time).

use crate::capture::{ident, literal};
use grafton_engine::events::ServedTrigger;
use grafton_schema::config::EventColumns;

/// The log, its invocation logs and the session row's table, created when missing.
pub const SCHEMA_SQL: &str = "
CREATE TABLE IF NOT EXISTS grafton_catalog_event_log (
  id TEXT PRIMARY KEY,
  trigger_name TEXT NOT NULL,
  schema_name TEXT NOT NULL,
  table_name TEXT NOT NULL,
  op TEXT NOT NULL,
  data TEXT NOT NULL,
  session TEXT,
  trace_context TEXT,
  created_at TEXT NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0,
  next_retry_at TEXT,
  locked_at TEXT,
  locked_by TEXT,
  delivered INTEGER NOT NULL DEFAULT 0,
  dead INTEGER NOT NULL DEFAULT 0,
  delivered_at TEXT
);
CREATE INDEX IF NOT EXISTS grafton_catalog_event_log_pending
  ON grafton_catalog_event_log (created_at) WHERE NOT delivered AND NOT dead;
CREATE TABLE IF NOT EXISTS grafton_catalog_event_invocation_logs (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  trigger_name TEXT NOT NULL,
  status INTEGER,
  request TEXT,
  response TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS grafton_catalog_event_invocation_logs_event
  ON grafton_catalog_event_invocation_logs (event_id);
CREATE TABLE IF NOT EXISTS grafton_catalog_event_session
  (id INTEGER PRIMARY KEY CHECK (id = 1), session TEXT, trace TEXT);
";

pub use grafton_engine::action_log::{NEW_ID, NOW};

/// Pairs per `json_object` (SQLite caps a function's arguments).
const PAIRS: usize = 60;

/// The database names of `trigger`'s SQLite triggers, one per operation.
pub fn object_names(trigger: &ServedTrigger) -> Vec<String> {
    let d = &trigger.config.definition;
    let name = crate::capture::object_name(&trigger.config.name);
    [
        ("insert", &d.insert),
        ("update", &d.update),
        ("delete", &d.delete),
    ]
    .iter()
    .filter(|(_, op)| op.is_some())
    .map(|(op, _)| format!("{name}__{op}"))
    .collect()
}

/// One column's value as the payload holds it: booleans as `true`/`false`, JSON
/// as JSON, blobs as PostgreSQL's `\x…` text, infinite reals as null (JSON has
/// none); built-in functions only, as other clients' writes run it too.
fn value(row: &str, column: &str, t: &ServedTrigger) -> String {
    let c = format!("{row}.{}", ident(column));
    let plain = format!(
        "CASE typeof({c}) WHEN 'blob' THEN '\\x' || lower(hex({c})) \
         WHEN 'real' THEN CASE WHEN abs({c}) <= 1.7976931348623157e308 THEN {c} END ELSE {c} END"
    );
    if t.booleans.iter().any(|b| b == column) {
        format!(
            "CASE WHEN {c} IS NULL THEN NULL WHEN typeof({c}) IN ('integer', 'real') \
             THEN json(CASE WHEN {c} THEN 'true' ELSE 'false' END) ELSE {plain} END"
        )
    } else if t.jsons.iter().any(|j| j == column) {
        format!(
            "CASE WHEN typeof({c}) = 'text' AND json_valid({c}) THEN json({c}) ELSE {plain} END"
        )
    } else {
        plain
    }
}

/// A row's JSON: every column, or those `payload` names.
fn row_json(row: &str, t: &ServedTrigger, payload: Option<&EventColumns>) -> String {
    let columns: Vec<&String> = match payload {
        Some(EventColumns::Some(list)) => list.iter().collect(),
        _ => t.columns.iter().collect(),
    };
    let objects: Vec<String> = columns
        .chunks(PAIRS)
        .map(|chunk| {
            let pairs: Vec<String> = (chunk.iter())
                .map(|c| format!("{}, {}", literal(c), value(row, c, t)))
                .collect();
            format!("json_object({})", pairs.join(", "))
        })
        .collect();
    match objects.as_slice() {
        [] => "json_object()".into(),
        [one] => one.clone(),
        _ => {
            // Wide rows: the chunks' members joined as text (each chunk holds at
            // least one), so every value keeps its JSON type.
            let inner: Vec<String> = (objects.iter())
                .map(|o| format!("substr({o}, 2, length({o}) - 2)"))
                .collect();
            format!("json('{{' || {} || '}}')", inner.join(" || ',' || "))
        }
    }
}

/// The SQL that (re)creates `t`'s triggers.
pub fn install_sql(t: &ServedTrigger) -> String {
    let d = &t.config.definition;
    let name = crate::capture::object_name(&t.config.name);
    let table = ident(&t.table);
    let mut sql = String::new();
    for op in ["insert", "update", "delete"] {
        sql.push_str(&format!(
            "DROP TRIGGER IF EXISTS {};\n",
            ident(&format!("{name}__{op}"))
        ));
    }
    let insert = |op: &str, data: String| {
        format!(
            "INSERT INTO grafton_catalog_event_log (id, trigger_name, schema_name, table_name, op,
               data, session, trace_context, created_at)
             VALUES ({NEW_ID}, {}, {}, {}, '{op}', {data},
               (SELECT session FROM grafton_catalog_event_session WHERE id = 1),
               (SELECT trace FROM grafton_catalog_event_session WHERE id = 1), {NOW});",
            literal(&t.config.name),
            literal(&t.schema),
            literal(&t.table),
        )
    };
    if let Some(spec) = &d.insert {
        let data = format!(
            "json_object('old', NULL, 'new', {})",
            row_json("NEW", t, spec.payload.as_ref())
        );
        sql.push_str(&format!(
            "CREATE TRIGGER {} AFTER INSERT ON {table} FOR EACH ROW BEGIN {} END;\n",
            ident(&format!("{name}__insert")),
            insert("INSERT", data)
        ));
    }
    if let Some(spec) = &d.update {
        // Listed columns fire only when one of them changed.
        let (of, when) = match &spec.columns {
            EventColumns::All(_) => (String::new(), String::new()),
            EventColumns::Some(list) if list.is_empty() => (String::new(), " WHEN 0".into()),
            EventColumns::Some(list) => {
                let of: Vec<String> = list.iter().map(|c| ident(c)).collect();
                let changed: Vec<String> = (list.iter())
                    .map(|c| format!("OLD.{0} IS NOT NEW.{0}", ident(c)))
                    .collect();
                (
                    format!(" OF {}", of.join(", ")),
                    format!(" WHEN {}", changed.join(" OR ")),
                )
            }
        };
        let payload = spec.payload.as_ref();
        let data = format!(
            "json_object('old', {}, 'new', {})",
            row_json("OLD", t, payload),
            row_json("NEW", t, payload)
        );
        sql.push_str(&format!(
            "CREATE TRIGGER {} AFTER UPDATE{of} ON {table} FOR EACH ROW{when} BEGIN {} END;\n",
            ident(&format!("{name}__update")),
            insert("UPDATE", data)
        ));
    }
    if let Some(spec) = &d.delete {
        let data = format!(
            "json_object('old', {}, 'new', NULL)",
            row_json("OLD", t, spec.payload.as_ref())
        );
        sql.push_str(&format!(
            "CREATE TRIGGER {} AFTER DELETE ON {table} FOR EACH ROW BEGIN {} END;\n",
            ident(&format!("{name}__delete")),
            insert("DELETE", data)
        ));
    }
    sql
}

/// Grafton's triggers now in the file: `(trigger, schema, table)` as one JSON array.
pub const INSTALLED_SQL: &str =
    "SELECT coalesce(json_group_array(json_array(name, 'main', tbl_name)), '[]')
  FROM main.sqlite_schema WHERE type = 'trigger' AND name LIKE 'grafton\\_event\\_%' ESCAPE '\\'";

/// The SQL that removes one of Grafton's triggers.
pub fn remove_sql(trigger: &str) -> String {
    format!("DROP TRIGGER IF EXISTS {};", ident(trigger))
}
