//! Mutation IR → write statements, and the `returning` selects over written rows.
//!
//! Every write returns the identity of each row it touched (Postgres: `ctid` and
//! `tableoid`; SQLite: `rowid`), followed by any columns asked for (a new parent's
//! key, for nested inserts). What the response shows is then selected by those
//! identities, after the write, so it shows the rows as they now are, with
//! relationships and aggregates like any query.

use crate::ctx::sql_type;
use crate::ctx::Ctx;

mod identity;

use grafton_catalog::{ScalarKind, TableKind};
use grafton_ir::permissions::{Preset, RoleRules};
use grafton_ir::{BoolExp, ColumnOp, Field, OnConflict, UpdateOperator};
use grafton_schema::{SchemaModel, TableId};
use grafton_sql::{
    Conflict, Delete, Expr, Insert, InsertColumn, Param, ParamValue, SqlType, TableRef, Update,
    UpdateOp, Write,
};
pub use identity::{conflicting, count_failing, identity_width, lock, select_call, select_written};
use identity::{identities, returning};
use serde_json::Value as Json;

/// A row a write returned: its identity, then the extra columns asked for.
pub type ReturnedRow = Vec<Json>;

fn literal(value: Json, ty: SqlType, list: bool) -> Param {
    Param {
        value: ParamValue::Literal(value),
        ty,
        list,
    }
}

/// What a write statement returns for each row it touched.
#[derive(Debug, Clone, Copy)]
pub enum Returned<'a> {
    /// The row's identity, then these columns (a nested insert's keys).
    Identity(&'a [usize]),
    /// As `Identity`, then on Postgres whether the row was inserted (`true`) rather
    /// than updated by the upsert's conflict branch (`xmax = 0`, as Hasura tells them
    /// apart). SQLite has no such mark: see [`conflicting`].
    Upsert(&'a [usize]),
    /// One JSON object per selection: the response built by the write statement
    /// itself, when it shows nothing but the written row's own columns.
    Objects(&'a [&'a [(String, Field)]]),
}

/// Whether `fields` can be answered from the written row alone (no relationships or
/// aggregates, which would read other rows as they were before the statement).
pub fn row_only(fields: &[(String, Field)]) -> bool {
    fields.iter().all(|(_, f)| {
        matches!(
            f,
            Field::Column(_) | Field::JsonPath(..) | Field::Typename(_)
        )
    })
}

/// Which rows an update or delete touches.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The rows matching a filter (the role's rule for the write is added).
    Matching(&'a BoolExp),
    /// Exactly these rows, found before by [`lock`] (which applied the rule).
    Exactly(&'a [ReturnedRow]),
}

/// An update or a delete: which of the role's row rules applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// The update permission's `filter`.
    Update,
    /// The delete permission's `filter`.
    Delete,
}

impl Ctx<'_> {
    /// The condition selecting `target` on `alias`.
    fn target(&mut self, table: TableId, alias: &str, target: Target<'_>, kind: WriteKind) -> Expr {
        match target {
            Target::Exactly(ids) => Expr::RowIdIn {
                alias: alias.to_owned(),
                ids: identities(self.model, table, ids),
            },
            Target::Matching(filter) => {
                let rule = self
                    .table_rules(table)
                    .and_then(|r| match kind {
                        WriteKind::Update => r.update_filter.as_ref(),
                        WriteKind::Delete => r.delete_filter.as_ref(),
                    })
                    .map(|rule| self.trusted_filter(table, alias, rule));
                and(self.filter(table, alias, filter), rule)
            }
        }
    }

    /// The written table, aliased.
    fn table_ref(&mut self, table: TableId) -> TableRef {
        let alias = self.alias("_t");
        let t = self.model.table(table);
        TableRef {
            schema: self.schema_of(t),
            name: t.name.clone(),
            alias,
            view: t.kind == TableKind::View,
        }
    }
}

fn and(filter: Expr, rule: Option<Expr>) -> Expr {
    match rule {
        Some(rule) => Expr::And(vec![filter, rule]),
        None => filter,
    }
}

/// `INSERT` of `rows` (values in `columns` order) into `table`.
pub fn insert(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    table: TableId,
    columns: &[usize],
    rows: &[Vec<Json>],
    on_conflict: Option<&OnConflict>,
    returned: Returned<'_>,
) -> Write {
    let mut cx = Ctx::new(model, rules);
    let t = model.table(table);
    let table_ref = cx.table_ref(table);
    let presets: &[(usize, Preset)] = match on_conflict {
        Some(oc) if !oc.update_columns.is_empty() => cx
            .table_rules(table)
            .map(|r| r.update_set.as_slice())
            .unwrap_or(&[]),
        _ => &[],
    };
    let conflict = on_conflict.map(|oc| Conflict {
        columns: oc
            .columns
            .iter()
            .map(|&c| t.columns[c].name.clone())
            .collect(),
        update: oc
            .update_columns
            .iter()
            .filter(|c| !presets.iter().any(|(p, _)| p == *c))
            .map(|&c| t.columns[c].name.clone())
            .collect(),
        // The role's update presets hold in the conflict branch as in any update.
        set: presets
            .iter()
            .map(|(c, preset)| {
                let col = &t.columns[*c];
                let ty = SqlType::Stored(Box::new(sql_type(&cx, &col.scalar)));
                let value = match preset {
                    Preset::Value(v) => ParamValue::Literal(v.clone()),
                    Preset::Session(name) => ParamValue::Variable(name.clone()),
                };
                let param = Param {
                    value,
                    ty,
                    list: false,
                };
                (col.name.clone(), Expr::Param(param))
            })
            .collect(),
        // The conflict branch is an update: the role's update rule limits it too.
        filter: {
            let alias = table_ref.alias.clone();
            let rule = cx
                .table_rules(table)
                .and_then(|r| r.update_filter.as_ref())
                .map(|rule| cx.trusted_filter(table, &alias, rule));
            match (
                oc.filter.as_ref().map(|f| cx.filter(table, &alias, f)),
                rule,
            ) {
                (Some(f), rule) => Some(and(f, rule)),
                (None, rule) => rule,
            }
        },
    });
    let returning = returning(model, &table_ref, table, returned);
    Write::Insert(Insert {
        returning,
        columns: columns
            .iter()
            .map(|&c| InsertColumn {
                name: t.columns[c].name.clone(),
                json: matches!(t.columns[c].scalar, ScalarKind::Json | ScalarKind::Jsonb),
                spatial: (t.columns[c].scalar.is_spatial())
                    .then(|| sql_type(&cx, &t.columns[c].scalar)),
            })
            .collect(),
        table: table_ref,
        rows: rows.to_vec(),
        on_conflict: conflict,
    })
}

/// `UPDATE` of the rows matching `filter`.
pub fn update(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    table: TableId,
    target: Target<'_>,
    ops: &[ColumnOp],
    returned: Returned<'_>,
) -> Write {
    let mut cx = Ctx::new(model, rules);
    let t = model.table(table);
    let table_ref = cx.table_ref(table);
    let alias = table_ref.alias.clone();
    let mut set = Vec::new();
    for op in ops {
        let col = &t.columns[op.column];
        let current = Expr::column(&alias, &col.name);
        // Converted to the column's own type as an insert converts it (enums,
        // arrays, jsonb…).
        let typed_operand = || Expr::Written {
            column: col.name.clone(),
            value: Box::new(op.value.clone()),
            ty: sql_type(&cx, &col.scalar),
        };
        let value = match op.op {
            UpdateOperator::Set => typed_operand(),
            UpdateOperator::Inc => column_update(current, UpdateOp::Inc, typed_operand()),
            UpdateOperator::Append => column_update(current, UpdateOp::Append, typed_operand()),
            UpdateOperator::Prepend => column_update(current, UpdateOp::Prepend, typed_operand()),
            UpdateOperator::DeleteKey => column_update(
                current,
                UpdateOp::DeleteKey,
                Expr::Param(literal(op.value.clone(), SqlType::Builtin("text"), false)),
            ),
            UpdateOperator::DeleteElem => column_update(
                current,
                UpdateOp::DeleteElem,
                Expr::Param(literal(op.value.clone(), SqlType::Builtin("int4"), false)),
            ),
            UpdateOperator::DeleteAtPath => column_update(
                current,
                UpdateOp::DeleteAtPath,
                Expr::Param(literal(op.value.clone(), SqlType::Builtin("text"), true)),
            ),
        };
        set.push((col.name.clone(), value));
    }
    let filter = cx.target(table, &alias, target, WriteKind::Update);
    let returning = returning(model, &table_ref, table, returned);
    Write::Update(Update {
        returning,
        table: table_ref,
        set,
        filter: Some(filter),
    })
}

fn column_update(current: Expr, op: UpdateOp, operand: Expr) -> Expr {
    Expr::ColumnUpdate {
        column: Box::new(current),
        op,
        operand: Box::new(operand),
    }
}

/// `DELETE` of the target rows.
pub fn delete(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    table: TableId,
    target: Target<'_>,
    returned: Returned<'_>,
) -> Write {
    let mut cx = Ctx::new(model, rules);
    let table_ref = cx.table_ref(table);
    let alias = table_ref.alias.clone();
    let condition = Some(cx.target(table, &alias, target, WriteKind::Delete));
    let returning = returning(model, &table_ref, table, returned);
    Write::Delete(Delete {
        returning,
        table: table_ref,
        filter: condition,
    })
}
