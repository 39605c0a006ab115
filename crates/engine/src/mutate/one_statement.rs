//! The fast path: a mutation that one write statement answers by itself, with no
//! transaction and no second statement.

use super::insert::{column_set, row_values};
use super::{data_object, is_empty_update, push_json, sqlite_view};
use crate::error::EngineError;
use grafton_execute::Database;
use grafton_ir::permissions::RoleRules;
use grafton_ir::{Action, Mutation, MutationRoot, Output, ResponseField, Write};
use grafton_schema::SchemaModel;
use grafton_translate::mutation::{self as sql, Target};
use serde_json::{Map, Value};

/// A mutation one write statement can answer by itself: one write, whose response
/// shows only the written rows' own columns. It then needs no transaction and no
/// second statement (the statement's `RETURNING` builds the response's rows).
pub(super) struct OneStatement<'m> {
    pub(super) write: &'m Write,
    /// The selections the statement returns a JSON object for, per row.
    selections: Vec<&'m [(String, grafton_ir::Field)]>,
    /// The insert's columns and rows, in column order.
    insert: Option<(Vec<usize>, Vec<Vec<Value>>)>,
}

/// Whether the role's rules leave `write` to the one-statement path: its `RETURNING`
/// shows rows without the read rule, and checks need the rows' identities.
fn plain_for(rules: Option<&RoleRules>, write: &Write) -> bool {
    let Some(t) = rules.and_then(|r| r.tables.get(write.table)) else {
        return true;
    };
    let checked = match &write.action {
        // An upsert's conflict branch is an update, checked as one.
        Action::Insert { on_conflict, .. } => {
            t.insert_check.is_some()
                || (on_conflict
                    .as_ref()
                    .is_some_and(|oc| !oc.update_columns.is_empty())
                    && t.update_check.is_some())
        }
        Action::Update { .. } => t.update_check.is_some(),
        Action::Delete(_) => false,
    };
    t.select.is_none() && t.redact.is_empty() && !checked
}

pub(super) fn one_statement<'m>(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    mutation: &'m Mutation,
) -> Option<OneStatement<'m>> {
    let mut write = None;
    for (_, root) in &mutation.root {
        match root {
            MutationRoot::Typename(_) => {}
            MutationRoot::Write(w) if write.is_none() => write = Some(w),
            _ => return None,
        }
    }
    // A SQLite view's RETURNING shows no values: its writes take the general path.
    let write = write
        .filter(|w| plain_for(rules, w) && !is_empty_update(w) && !sqlite_view(model, w.table))?;
    let selections: Vec<&[(String, grafton_ir::Field)]> = match &write.output {
        Output::Single(fields) => vec![fields.as_slice()],
        Output::Response(fields) => fields
            .iter()
            .filter_map(|(_, f)| match f {
                ResponseField::Returning(fields) => Some(fields.as_slice()),
                _ => None,
            })
            .collect(),
    };
    if !selections.iter().all(|f| sql::row_only(f)) {
        return None;
    }
    let insert = match &write.action {
        Action::Insert { rows, .. } => {
            let first = rows.first()?;
            let columns = column_set(first);
            let flat = rows
                .iter()
                .all(|r| r.objects.is_empty() && r.arrays.is_empty() && column_set(r) == columns);
            if !flat || columns.is_empty() {
                return None;
            }
            Some((columns.clone(), row_values(rows, &columns)))
        }
        _ => None,
    };
    Some(OneStatement {
        write,
        selections,
        insert,
    })
}

/// The one statement a plain write runs: an `INSERT`, `UPDATE` or `DELETE` that
/// returns the rows the answer selects.
pub(super) fn statement(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    one: &OneStatement<'_>,
) -> Result<grafton_sql::Statement, EngineError> {
    let w = one.write;
    // An affected_rows-only answer still needs a row per write to count.
    let empty: [&[(String, grafton_ir::Field)]; 1] = [&[]];
    let selections: &[&[(String, grafton_ir::Field)]] = if one.selections.is_empty() {
        &empty
    } else {
        &one.selections
    };
    let returned = sql::Returned::Objects(selections);
    let write = match (&w.action, &one.insert) {
        (Action::Insert { on_conflict, .. }, Some((columns, values))) => sql::insert(
            model,
            rules,
            w.table,
            columns,
            values,
            on_conflict.as_ref(),
            returned,
        ),
        (Action::Update { filter, ops }, _) => sql::update(
            model,
            rules,
            w.table,
            Target::Matching(filter),
            ops,
            returned,
        ),
        (Action::Delete(filter), _) => {
            sql::delete(model, rules, w.table, Target::Matching(filter), returned)
        }
        (Action::Insert { .. }, None) => {
            return Err(EngineError::validation("insert without rows".to_owned()))
        }
    };
    Ok(grafton_sql::render_write(&write, model.dialect()))
}

pub(super) async fn run_one(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    db: &Database,
    mutation: &Mutation,
    one: &OneStatement<'_>,
    variables: &Map<String, Value>,
    timeout: std::time::Duration,
) -> Result<String, EngineError> {
    let w = one.write;
    let statement = statement(model, rules, one)?;
    let mut tx = db.autocommit(timeout).await?;
    let rows = tx.rows(&statement, variables).await?;
    tx.commit().await?;
    // Postgres pads json_build_object's output; SQLite's is compact already.
    let object = |row: &[Value], i: usize| match row.get(i) {
        Some(Value::String(s)) => grafton_execute::compact_json(s),
        _ => "null".to_owned(),
    };
    let mut field = String::new();
    match &w.output {
        Output::Single(_) => match rows.first() {
            Some(row) => field.push_str(&object(row, 0)),
            None => field.push_str("null"),
        },
        Output::Response(fields) => {
            field.push('{');
            let mut returning = 0;
            for (i, (key, f)) in fields.iter().enumerate() {
                if i > 0 {
                    field.push(',');
                }
                push_json(&mut field, key);
                field.push(':');
                match f {
                    ResponseField::Typename(name) => push_json(&mut field, name),
                    ResponseField::AffectedRows => field.push_str(&rows.len().to_string()),
                    ResponseField::Returning(_) => {
                        field.push('[');
                        for (j, row) in rows.iter().enumerate() {
                            if j > 0 {
                                field.push(',');
                            }
                            field.push_str(&object(row, returning));
                        }
                        field.push(']');
                        returning += 1;
                    }
                }
            }
            field.push('}');
        }
    }
    Ok(data_object(mutation, vec![field]))
}
