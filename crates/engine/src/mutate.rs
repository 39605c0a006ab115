//! Running a mutation: every root field in document order, in one transaction that
//! commits only if all of them succeed. Each write returns the identities of the rows
//! it touched; the response is then selected by those identities.

use crate::error::EngineError;
use grafton_catalog::Backend;
use grafton_execute::{Database, ExecuteError};
use grafton_ir::permissions::RoleRules;
use grafton_ir::{Action, Mutation, MutationRoot, Output, ResponseField, Write};
use grafton_schema::{SchemaModel, TableId};
use grafton_translate::mutation::{self as sql, ReturnedRow, Target, WriteKind};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;

mod insert;
mod one_statement;
mod statements;
mod written;

pub(crate) use written::{changed_names, tables_written, writes_unnamed};

use one_statement::{one_statement, run_one};
pub(crate) use statements::explain;
use statements::Statements;

/// Runs `mutation` (under a role's `rules`, if any) and returns the `data` object's
/// JSON text. With `session` (the caller's session as JSON, when a table it writes
/// has an event trigger) the transaction carries it for the triggers to read.
pub(crate) async fn run(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    db: &Database,
    mutation: &Mutation,
    variables: &Map<String, Value>,
    timeout: std::time::Duration,
    session: Option<(&str, &str)>,
) -> Result<String, EngineError> {
    if let Some(one) = one_statement(model, rules, mutation).filter(|_| session.is_none()) {
        let writing = Some((
            one.write.table,
            matches!(one.write.action, Action::Delete(_)),
        ));
        return run_one(model, rules, db, mutation, &one, variables, timeout)
            .await
            .map_err(|e| name_constraint(model, e, writing));
    }
    let mut tx = db.begin(timeout).await?;
    let sqlite = db.dialect() == grafton_sql::Dialect::Sqlite;
    if let Some((session, trace)) = session {
        if sqlite {
            let (create, set) = grafton_sql::render::set_session_sqlite(session, trace);
            tx.batch(&create).await?;
            tx.rows(&set, &Map::new()).await?;
        } else {
            let set = grafton_sql::render::set_session(session, trace);
            tx.rows(&set, &Map::new()).await?;
        }
    }
    let mut run = Run {
        model,
        rules,
        variables,
        tx: Statements::Tx(&mut tx),
        writing: None,
    };
    let result = run.all(mutation).await;
    let writing = run.writing;
    match result {
        Ok(data) => {
            if sqlite && session.is_some() {
                // The session row is this transaction's alone.
                let table = grafton_sql::render::SQLITE_EVENT_SESSION;
                tx.batch(&format!("DELETE FROM {table}")).await?;
            }
            tx.commit().await?;
            Ok(data)
        }
        Err(e) => {
            tx.rollback().await;
            Err(name_constraint(model, e, writing))
        }
    }
}

/// SQLite names no constraint in its errors; find the one on the offending columns,
/// or for a foreign key failure, the only foreign key the failed write can break.
fn name_constraint(
    model: &SchemaModel,
    e: EngineError,
    writing: Option<(TableId, bool)>,
) -> EngineError {
    let EngineError::Execute(ExecuteError::Constraint(mut v)) = e else {
        return e;
    };
    if let (None, true, Some((table, deleting))) = (&v.constraint, v.columns.is_empty(), writing) {
        let t = model.table(table);
        // Inserts and updates break this table's keys; deletes, keys pointing at it.
        let candidates: Vec<(&grafton_catalog::Table, &grafton_catalog::ForeignKey)> = if deleting {
            model
                .catalog
                .tables
                .iter()
                .flat_map(|other| other.foreign_keys.iter().map(move |fk| (other, fk)))
                .filter(|(_, fk)| fk.ref_table == t.name && fk.ref_schema == t.schema)
                .collect()
        } else {
            t.foreign_keys.iter().map(|fk| (t, fk)).collect()
        };
        if let [(owner, fk)] = candidates.as_slice() {
            if v.message.starts_with("FOREIGN KEY") {
                v.constraint = Some(fk.name.clone());
                v.table = Some(owner.name.clone());
                v.columns = fk.columns.clone();
            }
        }
    }
    if v.constraint.is_none() && !v.columns.is_empty() {
        let table = model
            .tables
            .iter()
            .find(|t| Some(&model.catalog.tables[t.catalog_index].name) == v.table.as_ref());
        if let Some(info) = table {
            let t = &model.catalog.tables[info.catalog_index];
            let mut wanted: Vec<&str> = v.columns.iter().map(String::as_str).collect();
            wanted.sort_unstable();
            let found = info.constraints.iter().find(|(_, cols)| {
                let mut names: Vec<&str> =
                    cols.iter().map(|&c| t.columns[c].name.as_str()).collect();
                names.sort_unstable();
                names == wanted
            });
            if let Some((name, _)) = found {
                v.constraint = Some(name.clone());
            }
        }
    }
    EngineError::Execute(ExecuteError::Constraint(v))
}

struct Run<'a> {
    model: &'a SchemaModel,
    rules: Option<&'a RoleRules>,
    variables: &'a Map<String, Value>,
    tx: Statements<'a>,
    /// The table being written and whether by a delete, for naming constraint errors.
    writing: Option<(TableId, bool)>,
}

/// The `data` object: each root field's key with its JSON (`fields`, in order, for
/// the fields that are not `__typename`).
fn data_object(mutation: &Mutation, fields: Vec<String>) -> String {
    let mut fields = fields.into_iter();
    let mut out = String::from("{");
    for (i, (key, root)) in mutation.root.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json(&mut out, key);
        out.push(':');
        match root {
            MutationRoot::Typename(name) => push_json(&mut out, name),
            _ => out.push_str(&fields.next().unwrap_or_else(|| "null".to_owned())),
        }
    }
    out.push('}');
    out
}

type Boxed<'f, T> = Pin<Box<dyn Future<Output = Result<T, EngineError>> + Send + 'f>>;

fn push_json(out: &mut String, value: &impl serde::Serialize) {
    out.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "null".into()));
}

impl Run<'_> {
    async fn all(&mut self, mutation: &Mutation) -> Result<String, EngineError> {
        let mut fields = Vec::new();
        for (_, root) in &mutation.root {
            match root {
                MutationRoot::Typename(_) => {}
                MutationRoot::Call(rows) => {
                    let statement = sql::select_call(self.model, self.rules, rows);
                    fields.push(self.json(statement).await?);
                }
                MutationRoot::Write(w) => fields.push(self.write(w).await?),
                MutationRoot::Many(writes) => {
                    let mut list = Vec::with_capacity(writes.len());
                    for w in writes {
                        list.push(self.write(w).await?);
                    }
                    fields.push(format!("[{}]", list.join(",")));
                }
            }
        }
        Ok(data_object(mutation, fields))
    }

    async fn write(&mut self, w: &Write) -> Result<String, EngineError> {
        let model = self.model;
        self.writing = Some((w.table, matches!(w.action, Action::Delete(_))));
        match &w.action {
            Action::Insert { rows, on_conflict } => {
                let mut affected = 0;
                let ids = self
                    .insert(w.table, rows, on_conflict.as_ref(), &[], &mut affected)
                    .await?;
                self.output(w.table, &w.output, &ids, affected).await
            }
            Action::Update { ops, .. } if ops.is_empty() => {
                // Nothing to set: no row changes (Hasura answers affected_rows 0).
                self.output(w.table, &w.output, &[], 0).await
            }
            Action::Update { filter, ops } => {
                let ids = if sqlite_view(self.model, w.table) {
                    // A SQLite view returns no values from an UPDATE: find the rows
                    // first (writes are serialised), then update exactly those.
                    let ids = self.locked(w.table, filter, WriteKind::Update).await?;
                    if !ids.is_empty() {
                        let target = Target::Exactly(&ids);
                        let statement = sql::update(
                            model,
                            self.rules,
                            w.table,
                            target,
                            ops,
                            sql::Returned::Identity(&[]),
                        );
                        self.rows(statement).await?;
                    }
                    ids
                } else {
                    let statement = sql::update(
                        model,
                        self.rules,
                        w.table,
                        Target::Matching(filter),
                        ops,
                        sql::Returned::Identity(&[]),
                    );
                    self.rows(statement).await?
                };
                let check = self
                    .rules
                    .and_then(|r| r.tables[w.table].update_check.as_ref());
                self.check(w.table, check, &ids, "update").await?;
                self.output(w.table, &w.output, &ids, ids.len()).await
            }
            Action::Delete(filter) => {
                if !shows_rows(&w.output) && !sqlite_view(self.model, w.table) {
                    let statement = sql::delete(
                        model,
                        self.rules,
                        w.table,
                        Target::Matching(filter),
                        sql::Returned::Identity(&[]),
                    );
                    let ids = self.rows(statement).await?;
                    return self.output(w.table, &w.output, &[], ids.len()).await;
                }
                // The response shows the rows as they were: lock them, read them, then
                // delete exactly those.
                let ids = self.locked(w.table, filter, WriteKind::Delete).await?;
                let out = self.output(w.table, &w.output, &ids, ids.len()).await?;
                if !ids.is_empty() {
                    let statement = sql::delete(
                        model,
                        self.rules,
                        w.table,
                        Target::Exactly(&ids),
                        sql::Returned::Identity(&[]),
                    );
                    self.rows(statement).await?;
                }
                Ok(out)
            }
        }
    }

    /// The identities of the rows `filter` (and the role's rule for `kind`) selects,
    /// locked until the transaction ends.
    async fn locked(
        &mut self,
        table: TableId,
        filter: &grafton_ir::BoolExp,
        kind: WriteKind,
    ) -> Result<Vec<ReturnedRow>, EngineError> {
        let statement = sql::lock(self.model, self.rules, table, filter, kind);
        Ok(self.rows(statement).await?)
    }

    /// Fails the mutation if any written row breaks a permission check.
    async fn check(
        &mut self,
        table: TableId,
        check: Option<&grafton_ir::BoolExp>,
        ids: &[ReturnedRow],
        what: &str,
    ) -> Result<(), EngineError> {
        let Some(check) = check else {
            return Ok(());
        };
        if ids.is_empty() {
            return Ok(());
        }
        let statement = sql::count_failing(self.model, table, check, ids);
        let rows = self.rows(statement).await?;
        let failing = rows
            .first()
            .and_then(|r| r.first())
            .map(|v| match v {
                Value::String(s) => s.parse::<u64>().unwrap_or(1),
                other => other.as_u64().unwrap_or(1),
            })
            .unwrap_or(0);
        if failing > 0 {
            let name = &self.model.tables[table].base_name;
            return Err(EngineError::Permission(format!(
                "check constraint of an {what} permission on \"{name}\" has failed for {failing} row(s)"
            )));
        }
        Ok(())
    }

    /// The field's JSON: a `t_mutation_response` object, or the single row (or null).
    async fn output(
        &mut self,
        table: TableId,
        output: &Output,
        ids: &[ReturnedRow],
        affected: usize,
    ) -> Result<String, EngineError> {
        match output {
            Output::Single(fields) => {
                let first = &ids[..ids.len().min(1)];
                match sql::select_written(self.model, self.rules, table, fields, first, true) {
                    Some(statement) => Ok(self.json(statement).await?),
                    None => Ok("null".into()),
                }
            }
            Output::Response(fields) => {
                let mut out = String::from("{");
                for (i, (key, field)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_json(&mut out, key);
                    out.push(':');
                    match field {
                        ResponseField::Typename(name) => push_json(&mut out, name),
                        ResponseField::AffectedRows => out.push_str(&affected.to_string()),
                        ResponseField::Returning(fields) => {
                            match sql::select_written(
                                self.model, self.rules, table, fields, ids, false,
                            ) {
                                Some(statement) => out.push_str(&self.json(statement).await?),
                                None => out.push_str("[]"),
                            }
                        }
                    }
                }
                out.push('}');
                Ok(out)
            }
        }
    }
}

/// Whether `table` is a SQLite view: its UPDATE and DELETE return no values (its
/// INSTEAD OF triggers do the work), so its written rows are found before the write.
fn sqlite_view(model: &SchemaModel, table: TableId) -> bool {
    model.backend == Backend::Sqlite && model.table(table).kind == grafton_catalog::TableKind::View
}

/// An update that sets nothing (an empty `_set`, no preset).
fn is_empty_update(w: &Write) -> bool {
    matches!(&w.action, Action::Update { ops, .. } if ops.is_empty())
}

/// Whether the response shows any of the written rows (so they must be read).
fn shows_rows(output: &Output) -> bool {
    match output {
        Output::Single(_) => true,
        Output::Response(fields) => fields
            .iter()
            .any(|(_, f)| matches!(f, ResponseField::Returning(_))),
    }
}
