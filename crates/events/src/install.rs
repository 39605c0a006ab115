//! Installing the capture: the log created when missing, and the database's
//! triggers made those served (PostgreSQL's `capture.rs`, SQLite's
//! `sqlite_capture.rs`).

use crate::{capture, sqlite_capture, Events};
use grafton_engine::events::ServedTrigger;
use grafton_execute::ExecuteError;
use std::time::Duration;

/// The database objects (triggers) that capture `t`'s writes.
fn objects(t: &ServedTrigger, sqlite: bool) -> Vec<String> {
    let d = &t.config.definition;
    if d.insert.is_none() && d.update.is_none() && d.delete.is_none() {
        // Manual only: nothing on the table.
        return Vec::new();
    }
    match sqlite {
        true => sqlite_capture::object_names(t),
        false => vec![capture::object_name(&t.config.name)],
    }
}

impl Events {
    /// Makes the database's triggers those served now (see [`Self::reconcile_with`]).
    pub async fn reconcile(&self) -> Result<(), ExecuteError> {
        let served: Vec<ServedTrigger> = self.engine.schemas().event_triggers().to_vec();
        self.reconcile_with(&served).await
    }

    /// Makes the database's triggers `served`: the log created when missing, each
    /// (re)installed, Grafton's others removed; serialized across instances by an
    /// advisory lock. Skipped when they are what this instance last installed and
    /// the database still has them (a reload with no trigger change runs no DDL).
    pub async fn reconcile_with(&self, served: &[ServedTrigger]) -> Result<(), ExecuteError> {
        let mut installed = self.installed.lock().await;
        if installed.as_deref() == Some(served) {
            let present = self.present().await?;
            let sqlite = self.sqlite();
            let expected: Vec<String> = served.iter().flat_map(|t| objects(t, sqlite)).collect();
            let names: Vec<&String> = present.iter().map(|(n, _, _)| n).collect();
            if names.len() == expected.len() && names.iter().all(|n| expected.contains(n)) {
                return Ok(());
            }
        }
        if served.is_empty() && installed.is_none() && !self.has_log().await? {
            // Nothing to capture and nothing ever installed: touch nothing.
            *installed = Some(Vec::new());
            return Ok(());
        }
        let sqlite = self.sqlite();
        let mut tx = match sqlite {
            // SQLite's one writer serializes instances sharing the file.
            true => {
                self.engine
                    .database()
                    .begin(Duration::from_secs(60))
                    .await?
            }
            false => self.ddl().await?,
        };
        let schema_sql = match sqlite {
            true => sqlite_capture::SCHEMA_SQL,
            false => capture::SCHEMA_SQL,
        };
        tx.batch(schema_sql).await?;
        let present = present_in(&mut tx, sqlite).await?;
        for (trigger, schema, table) in &present {
            let wanted = served.iter().any(|t| {
                objects(t, sqlite).contains(trigger) && t.schema == *schema && t.table == *table
            });
            if !wanted {
                let remove = match sqlite {
                    true => sqlite_capture::remove_sql(trigger),
                    false => capture::remove_sql(trigger, schema, table),
                };
                tx.batch(&remove).await?;
            }
        }
        for t in served {
            let install = match sqlite {
                true => sqlite_capture::install_sql(t),
                false => capture::install_sql(t),
            };
            tx.batch(&install).await?;
        }
        tx.commit().await?;
        tracing::info!(triggers = served.len(), "event triggers installed");
        *installed = Some(served.to_vec());
        Ok(())
    }

    /// Whether the database's triggers are those of the triggers served.
    pub(crate) async fn in_place(&self) -> Result<bool, ExecuteError> {
        let served: Vec<ServedTrigger> = self.engine.schemas().event_triggers().to_vec();
        let sqlite = self.sqlite();
        let expected: Vec<String> = served.iter().flat_map(|t| objects(t, sqlite)).collect();
        let present = self.present().await?;
        let names: Vec<&String> = present.iter().map(|(n, _, _)| n).collect();
        Ok(names.len() == expected.len() && names.iter().all(|n| expected.contains(n)))
    }

    /// Grafton's triggers in the database now: `(trigger, schema, table)`.
    async fn present(&self) -> Result<Vec<(String, String, String)>, ExecuteError> {
        let db = self.engine.database();
        let mut tx = db.autocommit(Duration::from_secs(10)).await?;
        let present = present_in(&mut tx, self.sqlite()).await?;
        tx.commit().await?;
        Ok(present)
    }

    /// Whether the event log exists (from this run or an earlier one).
    pub(crate) async fn has_log(&self) -> Result<bool, ExecuteError> {
        let sql = match self.sqlite() {
            true => {
                "SELECT json(CASE WHEN EXISTS (SELECT 1 FROM main.sqlite_schema
                       WHERE name = 'grafton_catalog_event_log') THEN 'true' ELSE 'false' END)"
            }
            false => "SELECT to_json(to_regclass('grafton_catalog.event_log') IS NOT NULL)::text",
        };
        Ok(self.one(sql.into(), Vec::new()).await? == serde_json::Value::Bool(true))
    }

    /// Whether the database is SQLite.
    pub(crate) fn sqlite(&self) -> bool {
        self.engine.database().backend() == grafton_catalog::Backend::Sqlite
    }
}

async fn present_in(
    tx: &mut grafton_execute::Tx,
    sqlite: bool,
) -> Result<Vec<(String, String, String)>, ExecuteError> {
    let sql = match sqlite {
        true => sqlite_capture::INSTALLED_SQL,
        false => capture::INSTALLED_SQL,
    };
    let statement = grafton_sql::Statement {
        sql: sql.into(),
        params: Vec::new(),
        compact: false,
    };
    let rows = tx.rows(&statement, &serde_json::Map::new()).await?;
    let text = rows
        .first()
        .and_then(|r| r.first())
        .and_then(|v| v.as_str());
    Ok(text
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default())
}

impl Events {
    /// On SQLite, before `run_sql` in `tx`: Grafton's triggers dropped, so the
    /// SQL may drop or rename a column they name (SQLite checks triggers).
    pub async fn lift_sqlite(&self, tx: &mut grafton_execute::Tx) -> Result<(), ExecuteError> {
        if !self.sqlite() {
            return Ok(());
        }
        for (trigger, _, _) in present_in(tx, true).await? {
            tx.batch(&sqlite_capture::remove_sql(&trigger)).await?;
        }
        Ok(())
    }

    /// On SQLite, after `run_sql` in `tx`, before it commits: the triggers
    /// installed again over the tables as the SQL left them, so no write goes
    /// uncaptured. One whose table or named column went stays out (the reload
    /// after reports it).
    pub async fn restore_sqlite(&self, tx: &mut grafton_execute::Tx) -> Result<(), ExecuteError> {
        if !self.sqlite() {
            return Ok(());
        }
        let served: Vec<ServedTrigger> = self.engine.schemas().event_triggers().to_vec();
        for mut t in served {
            let sql = format!(
                "SELECT coalesce(json_group_array(name), '[]') FROM pragma_table_xinfo({})",
                crate::capture::literal(&t.table)
            );
            let Some(list) = crate::sql::one_text(tx, &sql).await? else {
                continue;
            };
            let columns: Vec<String> = serde_json::from_str(&list).unwrap_or_default();
            if columns.is_empty() || names_missing(&t, &columns) {
                tracing::warn!(trigger = %t.config.name, "run_sql left the trigger's table or columns out: not reinstalled");
                continue;
            }
            t.columns = columns;
            tx.batch(&sqlite_capture::install_sql(&t)).await?;
        }
        Ok(())
    }
}

/// Whether `t` names a column (fired by, or in a payload) not in `columns`.
fn names_missing(t: &ServedTrigger, columns: &[String]) -> bool {
    use grafton_schema::config::EventColumns;
    let d = &t.config.definition;
    let ops = [&d.insert, &d.update, &d.delete];
    ops.into_iter().flatten().any(|op| {
        [Some(&op.columns), op.payload.as_ref()]
            .into_iter()
            .flatten()
            .any(|c| match c {
                EventColumns::Some(list) => list.iter().any(|c| !columns.contains(c)),
                EventColumns::All(_) => false,
            })
    })
}
