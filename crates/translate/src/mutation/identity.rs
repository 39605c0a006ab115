//! Finding written rows again: each write returns its rows' identity (Postgres's
//! `ctid` and `tableoid`, SQLite's `rowid`, or a view's key), and the follow-up
//! statements (`returning`, permission checks, deletes that show their rows) select
//! by it.

use super::{literal, Returned, ReturnedRow, Target, WriteKind};
use crate::ctx::sql_type;
use crate::ctx::Ctx;
use grafton_catalog::TableKind;
use grafton_ir::permissions::RoleRules;
use grafton_ir::{BoolExp, Field, Rows};
use grafton_schema::{SchemaModel, TableId};
use grafton_sql::{Expr, Identities, Returning, Select, SelectItem, SqlType, TableRef};
use serde_json::Value as Json;

/// How many leading values of a [`ReturnedRow`] are the row's identity.
pub fn identity_width(model: &SchemaModel, table: TableId) -> usize {
    match key_identity(model, table) {
        Some(key) => key.len(),
        None => model.dialect().identity_columns().len(),
    }
}

/// The key columns that identify a written row of a view (which has no `ctid` or
/// `rowid`); `None` for a base table, identified physically.
fn key_identity(model: &SchemaModel, table: TableId) -> Option<&[usize]> {
    let t = model.table(table);
    (t.kind == TableKind::View).then(|| model.tables[table].primary_key.as_slice())
}

/// What a write returns of each row: its identity (or a view's key), then the
/// `extra` columns; or one JSON object per selection.
pub(super) fn returning(
    model: &SchemaModel,
    table: &TableRef,
    id: TableId,
    returned: Returned<'_>,
) -> Vec<Returning> {
    let (extra, inserted) = match returned {
        Returned::Identity(extra) => (extra, false),
        Returned::Upsert(extra) => (extra, true),
        Returned::Objects(selections) => {
            let mut cx = Ctx::new(model, None);
            return selections
                .iter()
                .map(|fields| Returning::Expr(cx.row_object(id, &table.alias, fields)))
                .collect();
        }
    };
    let t = model.table(id);
    let column = |c: &usize| Returning::Column(t.columns[*c].name.clone());
    let mut items = match key_identity(model, id) {
        Some(key) => key.iter().map(column).collect(),
        None => vec![Returning::Identity],
    };
    items.extend(extra.iter().map(column));
    if inserted {
        items.push(Returning::Inserted);
    }
    items
}

/// The identities of `rows`, to find them again.
pub(super) fn identities(model: &SchemaModel, table: TableId, rows: &[ReturnedRow]) -> Identities {
    let t = model.table(table);
    let cx = Ctx::new(model, None);
    let key = key_identity(model, table).unwrap_or_default();
    Identities {
        rows: rows.to_vec(),
        key: key
            .iter()
            .map(|&c| {
                (
                    t.columns[c].name.clone(),
                    sql_type(&cx, &t.columns[c].scalar),
                )
            })
            .collect(),
    }
}

/// The identities of the rows matching `filter`, locked until the transaction ends
/// (the rows a delete will remove, read before it so `returning` can show them).
pub fn lock(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    table: TableId,
    filter: &BoolExp,
    kind: WriteKind,
) -> Select {
    let mut cx = Ctx::new(model, rules);
    let (from, alias) = cx.raw_table_from(table);
    let filter = cx.target(table, &alias, Target::Matching(filter), kind);
    let qualified = |name: &str| Expr::column(&alias, name);
    let t = model.table(table);
    let items = match key_identity(model, table) {
        Some(key) => key
            .iter()
            .map(|&c| {
                let e = Expr::ReadText(Box::new(qualified(&t.columns[c].name)));
                SelectItem::Expr(e, format!("k{c}"))
            })
            .collect(),
        None => vec![SelectItem::Identity(alias.clone())],
    };
    Select {
        items,
        from: Some(from),
        filter: Some(filter),
        lock: true,
        ..Select::default()
    }
}

/// The JSON of the written rows `ids` (in their order) with `fields`: an array, or
/// with `single` the first row's object (or null). `None` when there is nothing to
/// select (no rows, or no fields asked for).
pub fn select_written(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    table: TableId,
    fields: &[(String, Field)],
    ids: &[ReturnedRow],
    single: bool,
) -> Option<Select> {
    if ids.is_empty() {
        return None;
    }
    let mut cx = Ctx::new(model, rules);
    let rows = Rows {
        table,
        args: Default::default(),
        fields: fields.to_vec(),
        single,
    };
    let expr = cx.rows_from(&rows, None, Some(identities(model, table, ids)));
    Some(Select {
        items: vec![SelectItem::Expr(expr, "data".into())],
        ..Select::default()
    })
}

/// The JSON of a mutation function's rows (a tracked `VOLATILE` function, called in
/// the mutation's transaction), under the role's read rule on what it returns.
pub fn select_call(model: &SchemaModel, rules: Option<&RoleRules>, rows: &Rows) -> Select {
    let mut cx = Ctx::new(model, rules);
    let expr = cx.rows(rows, None);
    Select {
        items: vec![SelectItem::Expr(expr, "data".into())],
        ..Select::default()
    }
}

/// How many of the written rows `ids` fail `check` (an insert or update permission
/// check), counted in the same transaction, after the write.
pub fn count_failing(
    model: &SchemaModel,
    table: TableId,
    check: &BoolExp,
    ids: &[ReturnedRow],
) -> Select {
    let mut cx = Ctx::new(model, None);
    let table_ref = cx.table_ref(table);
    let alias = table_ref.alias.clone();
    // NULL fails a check, as in Postgres's WITH CHECK.
    let failing = Expr::NotTrue(Box::new(cx.trusted_filter(table, &alias, check)));
    Select {
        items: vec![SelectItem::Expr(
            Expr::ReadText(Box::new(Expr::CountStar)),
            "failing".into(),
        )],
        from: Some(grafton_sql::From::RowIds {
            table: table_ref,
            ids: identities(model, table, ids),
        }),
        filter: Some(failing),
        ..Select::default()
    }
}

/// The identities of existing rows an upsert of `rows` (values in `columns` order)
/// would conflict with on `key`, read before it runs in the same write transaction,
/// so its returned rows can be told apart (inserted or updated) where the database
/// does not mark them (SQLite). `None` when a key column is not among the written
/// ones: its value is a default the rows do not show.
pub fn conflicting(
    model: &SchemaModel,
    table: TableId,
    key: &[usize],
    columns: &[usize],
    rows: &[Vec<Json>],
) -> Option<Select> {
    let positions: Vec<usize> = key
        .iter()
        .map(|k| columns.iter().position(|c| c == k))
        .collect::<Option<_>>()?;
    let mut cx = Ctx::new(model, None);
    let (from, alias) = cx.table_from(table);
    let t = model.table(table);
    let matches = rows
        .iter()
        .map(|values| {
            Expr::And(
                key.iter()
                    .zip(&positions)
                    .map(|(&k, &p)| Expr::Compare {
                        left: Box::new(Expr::column(&alias, &t.columns[k].name)),
                        op: grafton_sql::BinOp::Eq,
                        right: Box::new(Expr::Param(literal(
                            values.get(p).cloned().unwrap_or(Json::Null),
                            SqlType::Stored(Box::new(sql_type(&cx, &t.columns[k].scalar))),
                            false,
                        ))),
                    })
                    .collect(),
            )
        })
        .collect();
    Some(Select {
        items: vec![SelectItem::Identity(alias)],
        from: Some(from),
        filter: Some(Expr::Or(matches)),
        ..Select::default()
    })
}
