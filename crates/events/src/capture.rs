//! Capturing writes on PostgreSQL: the event log in Grafton's own schema, and per
//! event trigger a trigger function and an `AFTER … FOR EACH ROW` trigger that
//! write one event per row changed, in the writing transaction, so an event exists
//! if and only if its write committed, whichever client wrote. The mutation's
//! session and trace context reach the function through the transaction-local
//! `grafton.session` and `grafton.trace`.

use grafton_engine::events::ServedTrigger;
use grafton_schema::config::EventColumns;

/// The prefix of the database triggers (and functions) Grafton owns.
pub const PREFIX: &str = "grafton_event_";

/// The event log and its invocation logs, created when missing.
pub const SCHEMA_SQL: &str = "
CREATE SCHEMA IF NOT EXISTS grafton_catalog;
CREATE TABLE IF NOT EXISTS grafton_catalog.event_log (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  trigger_name text NOT NULL,
  schema_name text NOT NULL,
  table_name text NOT NULL,
  op text NOT NULL,
  data jsonb NOT NULL,
  session jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  tries int NOT NULL DEFAULT 0,
  next_retry_at timestamptz,
  locked_at timestamptz,
  locked_by text,
  delivered boolean NOT NULL DEFAULT false,
  dead boolean NOT NULL DEFAULT false,
  delivered_at timestamptz
);
ALTER TABLE grafton_catalog.event_log ADD COLUMN IF NOT EXISTS trace_context jsonb;
CREATE INDEX IF NOT EXISTS event_log_pending ON grafton_catalog.event_log (created_at)
  WHERE NOT delivered AND NOT dead;
-- Half-full pages: an event's claim and its outcome then find room on its own page,
-- so their row versions are pruned there without waiting for a vacuum (delivery
-- held 10,000 events/s with 160,000 dead versions, against 3,200 at 100% full).
DO $fill$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_class WHERE oid = 'grafton_catalog.event_log'::regclass
      AND reloptions @> ARRAY['fillfactor=50']) THEN
    ALTER TABLE grafton_catalog.event_log SET (fillfactor = 50);
  END IF;
END $fill$;
CREATE TABLE IF NOT EXISTS grafton_catalog.event_invocation_logs (
  id bigserial PRIMARY KEY,
  event_id uuid NOT NULL,
  trigger_name text NOT NULL,
  status int,
  request jsonb,
  response text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS event_invocation_logs_event ON grafton_catalog.event_invocation_logs (event_id);
";

/// `"name"` with its quotes doubled.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'` with its quotes doubled.
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The database name of a trigger's function and trigger.
pub fn object_name(trigger: &str) -> String {
    format!("{PREFIX}{trigger}")
}

/// A row's JSON for the payload: every column, or those `payload` names; PostGIS
/// columns as GeoJSON with their CRS (Hasura's `ST_AsGeoJSON(value, 15, 4)`).
fn row_json(row: &str, t: &ServedTrigger, payload: Option<&EventColumns>) -> String {
    let value = |c: &str| match t.spatial.iter().find(|(s, _)| s == c) {
        Some((_, schema)) => format!(
            "{}.\"st_asgeojson\"({row}.{}, 15, 4)::jsonb",
            ident(schema),
            ident(c)
        ),
        None => format!("{row}.{}", ident(c)),
    };
    match payload {
        Some(EventColumns::Some(columns)) => {
            let pairs: Vec<String> = (columns.iter())
                .map(|c| format!("{}, {}", literal(c), value(c)))
                .collect();
            format!("jsonb_build_object({})", pairs.join(", "))
        }
        _ if t.spatial.is_empty() => format!("to_jsonb({row})"),
        _ => {
            let pairs: Vec<String> = (t.spatial.iter())
                .map(|(c, _)| format!("{}, {}", literal(c), value(c)))
                .collect();
            format!(
                "to_jsonb({row}) || jsonb_build_object({})",
                pairs.join(", ")
            )
        }
    }
}

/// The SQL that (re)creates `t`'s function and trigger.
pub fn install_sql(t: &ServedTrigger) -> String {
    let d = &t.config.definition;
    let name = object_name(&t.config.name);
    let table = format!("{}.{}", ident(&t.schema), ident(&t.table));
    let function = format!("grafton_catalog.{}", ident(&name));
    let mut ops = Vec::new();
    let mut fired = Vec::new();
    if let Some(insert) = &d.insert {
        ops.push("INSERT");
        fired.push(format!(
            "WHEN TG_OP = 'INSERT' THEN data := jsonb_build_object('old', NULL, 'new', {});",
            row_json("NEW", t, insert.payload.as_ref())
        ));
    }
    if let Some(update) = &d.update {
        ops.push("UPDATE");
        // Listed columns fire only when one of them changed.
        let changed = match &update.columns {
            EventColumns::All(_) => "true".to_owned(),
            EventColumns::Some(list) if list.is_empty() => "false".to_owned(),
            EventColumns::Some(list) => (list.iter())
                .map(|c| format!("OLD.{0} IS DISTINCT FROM NEW.{0}", ident(c)))
                .collect::<Vec<_>>()
                .join(" OR "),
        };
        let payload = update.payload.as_ref();
        fired.push(format!(
            "WHEN TG_OP = 'UPDATE' THEN IF NOT ({changed}) THEN RETURN NULL; END IF; \
             data := jsonb_build_object('old', {}, 'new', {});",
            row_json("OLD", t, payload),
            row_json("NEW", t, payload)
        ));
    }
    if let Some(delete) = &d.delete {
        ops.push("DELETE");
        fired.push(format!(
            "WHEN TG_OP = 'DELETE' THEN data := jsonb_build_object('old', {}, 'new', NULL);",
            row_json("OLD", t, delete.payload.as_ref())
        ));
    }
    let trigger = ident(&name);
    if ops.is_empty() {
        // Manual only: no trigger on the table.
        return format!("DROP TRIGGER IF EXISTS {trigger} ON {table};");
    }
    let body = format!(
        "
DECLARE data jsonb;
BEGIN
  CASE {cases} END CASE;
  INSERT INTO grafton_catalog.event_log
    (trigger_name, schema_name, table_name, op, data, session, trace_context)
  VALUES ({literal_name}, TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP, data,
          nullif(current_setting('grafton.session', true), '')::jsonb,
          nullif(current_setting('grafton.trace', true), '')::jsonb);
  RETURN NULL;
END ",
        cases = fired.join(" "),
        literal_name = literal(&t.config.name),
    );
    // The body's quote is one no name in it holds, so no name can end it.
    let mut tag = "$grafton$".to_owned();
    let mut n = 0;
    while body.contains(&tag) {
        n += 1;
        tag = format!("$grafton{n}$");
    }
    // SECURITY DEFINER: every role that writes the table may add its events (the
    // function runs as Grafton's user); its search_path is fixed for that reason.
    format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS {tag}{body}{tag};
DROP TRIGGER IF EXISTS {trigger} ON {table};
CREATE TRIGGER {trigger} AFTER {ops} ON {table} FOR EACH ROW EXECUTE FUNCTION {function}();",
        ops = ops.join(" OR "),
    )
}

/// The SQL listing Grafton's triggers now in the database: `(trigger, schema, table)`
/// as one JSON array.
pub const INSTALLED_SQL: &str =
    "SELECT coalesce(json_agg(json_build_array(t.tgname, n.nspname, c.relname)), '[]')::text
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE NOT t.tgisinternal AND t.tgname LIKE 'grafton\\_event\\_%'";

/// The SQL that removes one of Grafton's triggers and its function.
pub fn remove_sql(trigger: &str, schema: &str, table: &str) -> String {
    format!(
        "DROP TRIGGER IF EXISTS {0} ON {1}.{2}; DROP FUNCTION IF EXISTS grafton_catalog.{0}();",
        ident(trigger),
        ident(schema),
        ident(table)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use grafton_schema::config::{EventDefinition, EventTriggerConfig, OperationSpec, RetryConf};

    /// A name holding the body's quote cannot end it: another quote is chosen.
    #[test]
    fn no_name_can_end_the_function_body() {
        let hostile = "a$grafton$; DROP TABLE users; --".to_owned();
        let trigger = ServedTrigger {
            schema: "public".into(),
            table: "t".into(),
            columns: vec![hostile.clone()],
            booleans: Vec::new(),
            jsons: Vec::new(),
            spatial: Vec::new(),
            config: EventTriggerConfig {
                name: "t1".into(),
                definition: EventDefinition {
                    insert: Some(OperationSpec {
                        columns: EventColumns::All(grafton_schema::config::AllColumns::All),
                        payload: Some(EventColumns::Some(vec![hostile])),
                    }),
                    ..EventDefinition::default()
                },
                retry_conf: RetryConf::default(),
                webhook: Some("http://127.0.0.1:1/".into()),
                webhook_from_env: None,
                headers: Vec::new(),
                request_transform: None,
                response_transform: None,
                cleanup_config: None,
                comment: None,
            },
        };
        let sql = install_sql(&trigger);
        assert!(sql.contains("AS $grafton1$"), "{sql}");
        assert_eq!(sql.matches("$grafton1$").count(), 2, "{sql}");
    }
}
