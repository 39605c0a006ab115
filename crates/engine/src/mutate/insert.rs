//! Inserts: nested rows in dependency order, flat runs of rows as one statement
//! each, and the role's checks on what they wrote.

use super::{Boxed, Run};
use crate::error::EngineError;
use grafton_catalog::Backend;
use grafton_ir::{InsertRow, OnConflict};
use grafton_schema::TableId;
use grafton_translate::mutation::{self as sql, identity_width, ReturnedRow};
use serde_json::Value;

impl Run<'_> {
    /// Inserts `rows` into `table` and returns, per row written, its identity and the
    /// `extra` columns. Rows with nested inserts go one at a time (parents first, then
    /// the row, then its children); plain rows go as one statement per run of rows
    /// that set the same columns.
    pub(super) fn insert<'f>(
        &'f mut self,
        table: TableId,
        rows: &'f [InsertRow],
        on_conflict: Option<&'f OnConflict>,
        extra: &'f [usize],
        affected: &'f mut usize,
    ) -> Boxed<'f, Vec<ReturnedRow>> {
        Box::pin(async move {
            let nested = rows
                .iter()
                .any(|r| !r.objects.is_empty() || !r.arrays.is_empty());
            if !nested {
                return self
                    .insert_flat(table, rows, on_conflict, extra, affected)
                    .await;
            }
            let model = self.model;
            let width = identity_width(model, table);
            let mut out = Vec::new();
            for row in rows {
                let mut columns = row.columns.clone();
                for nested in &row.objects {
                    let rel = &model.relationships[nested.rel];
                    let targets: Vec<usize> = rel.mapping.iter().map(|&(_, t)| t).collect();
                    let parent = self
                        .insert(
                            rel.target,
                            &nested.rows,
                            nested.on_conflict.as_ref(),
                            &targets,
                            affected,
                        )
                        .await?;
                    let Some(parent) = parent.first() else {
                        return Err(EngineError::validation(format!(
                            "the nested insert through '{}' wrote no row (its on_conflict did nothing), so there is no row to link to; list columns in update_columns to link to the existing row",
                            rel.name
                        )));
                    };
                    for (k, &(source, _)) in rel.mapping.iter().enumerate() {
                        columns.push((
                            source,
                            parent.get(width + k).cloned().unwrap_or(Value::Null),
                        ));
                    }
                }
                // This row's own columns that its children's keys copy.
                let mut wanted: Vec<usize> = extra.to_vec();
                for nested in &row.arrays {
                    for &(source, _) in &model.relationships[nested.rel].mapping {
                        if !wanted.contains(&source) {
                            wanted.push(source);
                        }
                    }
                }
                let flat = [InsertRow {
                    columns,
                    ..InsertRow::default()
                }];
                let written = self
                    .insert_flat(table, &flat, on_conflict, &wanted, affected)
                    .await?;
                let Some(written) = written.into_iter().next() else {
                    // The row conflicted and was left alone: nothing to attach children to.
                    continue;
                };
                for nested in &row.arrays {
                    let rel = &model.relationships[nested.rel];
                    let children: Vec<InsertRow> = nested
                        .rows
                        .iter()
                        .map(|child| {
                            let mut child = child.clone();
                            for &(source, target) in &rel.mapping {
                                let pos = wanted.iter().position(|c| *c == source).unwrap_or(0);
                                let value =
                                    written.get(width + pos).cloned().unwrap_or(Value::Null);
                                child.columns.push((target, value));
                            }
                            child
                        })
                        .collect();
                    self.insert(
                        rel.target,
                        &children,
                        nested.on_conflict.as_ref(),
                        &[],
                        affected,
                    )
                    .await?;
                }
                let mut written = written;
                written.truncate(width + extra.len());
                out.push(written);
            }
            Ok(out)
        })
    }

    async fn insert_flat(
        &mut self,
        table: TableId,
        rows: &[InsertRow],
        on_conflict: Option<&OnConflict>,
        extra: &[usize],
        affected: &mut usize,
    ) -> Result<Vec<ReturnedRow>, EngineError> {
        let mut out = Vec::with_capacity(rows.len());
        let mut start = 0;
        while start < rows.len() {
            let columns = column_set(&rows[start]);
            let mut end = start + 1;
            while end < rows.len() && column_set(&rows[end]) == columns {
                end += 1;
            }
            let run = &rows[start..end];
            // Rows of defaults only cannot share a statement: one `DEFAULT VALUES` each.
            let batches: Vec<&[InsertRow]> = if columns.is_empty() {
                run.chunks(1).collect()
            } else {
                vec![run]
            };
            for batch in batches {
                let values = row_values(batch, &columns);
                let written = self
                    .insert_checked(table, &columns, &values, on_conflict, extra)
                    .await?;
                *affected += written.len();
                out.extend(written);
            }
            start = end;
        }
        Ok(out)
    }

    /// One insert statement, then the role's checks on what it wrote: the insert
    /// check on inserted rows, and, when an upsert's conflict branch updated rows, the
    /// update check on those (as Hasura does). Rows whose fate cannot be known get both.
    async fn insert_checked(
        &mut self,
        table: TableId,
        columns: &[usize],
        values: &[Vec<Value>],
        on_conflict: Option<&OnConflict>,
        extra: &[usize],
    ) -> Result<Vec<ReturnedRow>, EngineError> {
        let rules = self.rules.map(|r| &r.tables[table]);
        let insert_check = rules.and_then(|r| r.insert_check.as_ref());
        let update_check = rules.and_then(|r| r.update_check.as_ref());
        let updating = on_conflict.filter(|oc| !oc.update_columns.is_empty());
        let split = updating.is_some() && update_check.is_some();
        let backend = self.model.backend;
        // SQLite marks no row as updated: read the rows the upsert will update first.
        let existing: Option<Vec<Value>> = match updating {
            Some(oc) if split && backend == Backend::Sqlite => {
                let mut ids = Some(Vec::new());
                // One parameter per key value: chunks stay far below SQLite's limit.
                for chunk in values.chunks(1000) {
                    let Some(statement) =
                        sql::conflicting(self.model, table, &oc.columns, columns, chunk)
                    else {
                        ids = None;
                        break;
                    };
                    let rows = self.rows(statement).await?;
                    if let Some(ids) = ids.as_mut() {
                        ids.extend(rows.into_iter().filter_map(|r| r.into_iter().next()));
                    }
                }
                ids
            }
            _ => None,
        };
        let returned = if split {
            sql::Returned::Upsert(extra)
        } else {
            sql::Returned::Identity(extra)
        };
        let statement = sql::insert(
            self.model,
            self.rules,
            table,
            columns,
            values,
            on_conflict,
            returned,
        );
        self.writing = Some((table, false));
        let mut written = self.rows(statement).await?;
        if !split {
            self.check(table, insert_check, &written, "insert").await?;
            return Ok(written);
        }
        let width = identity_width(self.model, table) + extra.len();
        let (mut inserted, mut updated) = (Vec::new(), Vec::new());
        for row in &mut written {
            let fate = match backend {
                Backend::Postgres => row.get(width).map(|v| v == "true"),
                Backend::Sqlite => existing
                    .as_ref()
                    .map(|ids| !row.first().is_some_and(|id| ids.contains(id))),
            };
            row.truncate(width);
            match fate {
                Some(true) => inserted.push(row.clone()),
                Some(false) => updated.push(row.clone()),
                None => {
                    inserted.push(row.clone());
                    updated.push(row.clone());
                }
            }
        }
        self.check(table, insert_check, &inserted, "insert").await?;
        self.check(table, update_check, &updated, "update").await?;
        Ok(written)
    }
}

/// Each row's values in `columns` order (a column given twice: the last value wins).
pub(super) fn row_values(rows: &[InsertRow], columns: &[usize]) -> Vec<Vec<Value>> {
    rows.iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| {
                    r.columns
                        .iter()
                        .rev()
                        .find(|(col, _)| col == c)
                        .map(|(_, v)| v.clone())
                        .unwrap_or(Value::Null)
                })
                .collect()
        })
        .collect()
}

/// The columns a row sets, sorted (the key for grouping rows into one statement).
pub(super) fn column_set(row: &InsertRow) -> Vec<usize> {
    let mut cols: Vec<usize> = row.columns.iter().map(|(c, _)| *c).collect();
    cols.sort_unstable();
    cols.dedup();
    cols
}
