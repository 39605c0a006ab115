//! Finding written rows again: each write returns its rows' identity (Postgres's
//! `ctid` and `tableoid`, SQLite's `rowid`, or a view's key), and the follow-up
//! statements (`returning`, permission checks, deletes that show their rows) select
//! by it.

use super::{dialect, literal, sqlite_type, Returned, ReturnedRow, Target, WriteKind};
use crate::ctx::sql_type;
use crate::ctx::Ctx;
use grafton_catalog::{Backend, TableKind};
use grafton_ir::permissions::RoleRules;
use grafton_ir::{BoolExp, Field, Rows};
use grafton_schema::{SchemaModel, TableId};
use grafton_sql::{render, Expr, Select, SelectItem, SqlType, Statement, TableRef};
use serde_json::Value as Json;

/// How many leading values of a [`ReturnedRow`] are the row's identity.
pub fn identity_width(model: &SchemaModel, table: TableId) -> usize {
    match (key_identity(model, table), model.backend) {
        (Some(key), _) => key.len(),
        (None, Backend::Postgres) => 2,
        (None, Backend::Sqlite) => 1,
    }
}

/// The key columns that identify a written row of a view (which has no `ctid` or
/// `rowid`); `None` for a base table, identified physically.
fn key_identity(model: &SchemaModel, table: TableId) -> Option<&[usize]> {
    let t = model.table(table);
    (t.kind == TableKind::View).then(|| model.tables[table].primary_key.as_slice())
}

pub(crate) use crate::ctx::Identities;

/// `RETURNING` items (as text on Postgres, where every returned value is read as text).
/// Postgres qualifies them with the table's alias (an update's `FROM` has the same
/// column names); SQLite allows no qualifier there.
pub(super) fn returning(
    model: &SchemaModel,
    table: &TableRef,
    id: TableId,
    returned: Returned<'_>,
) -> Vec<Expr> {
    let postgres = model.backend == Backend::Postgres;
    let text = |e: Expr| {
        if postgres {
            Expr::Cast(Box::new(e), SqlType::Builtin("text"))
        } else {
            e
        }
    };
    let alias = if postgres { table.alias.as_str() } else { "" };
    let column = |name: &str| {
        if alias.is_empty() {
            Expr::Bare(name.to_owned())
        } else {
            Expr::column(alias, name)
        }
    };
    let (extra, flag) = match returned {
        Returned::Identity(extra) => (extra, false),
        Returned::Upsert(extra) => (extra, postgres),
        Returned::Objects(selections) => {
            let mut cx = Ctx::new(model, None);
            return selections
                .iter()
                .map(|fields| text(cx.row_object(id, alias, fields)))
                .collect();
        }
    };
    let t = model.table(id);
    let mut items = match (key_identity(model, id), postgres) {
        (Some(key), _) => key
            .iter()
            .map(|&c| text(column(&t.columns[c].name)))
            .collect(),
        (None, true) => vec![text(column("ctid")), text(column("tableoid"))],
        (None, false) => vec![column("rowid")],
    };
    items.extend(extra.iter().map(|&c| text(column(&t.columns[c].name))));
    if flag {
        items.push(text(Expr::Compare {
            left: Box::new(column("xmax")),
            op: grafton_sql::BinOp::Eq,
            right: Box::new(Expr::Int(0)),
        }));
    }
    items
}

/// The identities of `rows` (see [`Identities`]).
pub(super) fn id_params(model: &SchemaModel, table: TableId, rows: &[ReturnedRow]) -> Identities {
    let column = |i: usize| {
        Json::Array(
            rows.iter()
                .map(|r| r.get(i).cloned().unwrap_or(Json::Null))
                .collect(),
        )
    };
    let t = model.table(table);
    match (key_identity(model, table), model.backend) {
        (Some(key), Backend::Postgres) => {
            let cx = Ctx::new(model, None);
            let params = key
                .iter()
                .enumerate()
                .map(|(i, &c)| literal(column(i), sql_type(&cx, &t.columns[c].scalar), true))
                .collect();
            (params, key_names(t, key))
        }
        (Some(key), Backend::Sqlite) => {
            // One JSON array of key arrays: json_each walks the rows in order.
            let keys = rows
                .iter()
                .map(|r| Json::Array(r.iter().take(key.len()).cloned().collect()))
                .collect();
            let param = literal(Json::Array(keys), SqlType::Builtin("json"), true);
            (vec![param], key_names(t, key))
        }
        (None, Backend::Postgres) => (
            vec![
                literal(column(0), SqlType::Builtin("tid"), true),
                literal(column(1), SqlType::Builtin("oid"), true),
            ],
            Vec::new(),
        ),
        (None, Backend::Sqlite) => (
            vec![literal(column(0), SqlType::Builtin("int8"), true)],
            Vec::new(),
        ),
    }
}

fn key_names(t: &grafton_catalog::Table, key: &[usize]) -> Vec<String> {
    key.iter().map(|&c| t.columns[c].name.clone()).collect()
}

/// The identities of the rows matching `filter`, locked until the transaction ends
/// (the rows a delete will remove, read before it so `returning` can show them).
pub fn lock(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    table: TableId,
    filter: &BoolExp,
    kind: WriteKind,
) -> Statement {
    let mut cx = Ctx::new(model, rules);
    let (from, alias) = cx.raw_table_from(table);
    let filter = cx.target(table, &alias, Target::Matching(filter), kind);
    let qualified = |name: &str| Expr::column(&alias, name);
    let t = model.table(table);
    let items = match (key_identity(model, table), model.backend) {
        (Some(key), backend) => key
            .iter()
            .map(|&c| {
                let e = qualified(&t.columns[c].name);
                let e = match backend {
                    Backend::Postgres => Expr::Cast(Box::new(e), SqlType::Builtin("text")),
                    Backend::Sqlite => e,
                };
                SelectItem::Expr(e, format!("k{c}"))
            })
            .collect(),
        (None, Backend::Postgres) => vec![
            SelectItem::Expr(
                Expr::Cast(Box::new(qualified("ctid")), SqlType::Builtin("text")),
                "ctid".into(),
            ),
            SelectItem::Expr(
                Expr::Cast(Box::new(qualified("tableoid")), SqlType::Builtin("text")),
                "tableoid".into(),
            ),
        ],
        (None, Backend::Sqlite) => vec![SelectItem::Expr(qualified("rowid"), "rowid".into())],
    };
    let select = Select {
        items,
        from: Some(from),
        filter: Some(filter),
        lock: true,
        ..Select::default()
    };
    render(&select, dialect(model))
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
) -> Option<Statement> {
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
    let expr = cx.rows_from(&rows, None, Some(id_params(model, table, ids)));
    let select = Select {
        items: vec![SelectItem::Expr(expr, "data".into())],
        ..Select::default()
    };
    Some(render(&select, dialect(model)))
}

/// The JSON of a mutation function's rows (a tracked `VOLATILE` function, called in
/// the mutation's transaction), under the role's read rule on what it returns.
pub fn select_call(model: &SchemaModel, rules: Option<&RoleRules>, rows: &Rows) -> Statement {
    let mut cx = Ctx::new(model, rules);
    let expr = cx.rows(rows, None);
    let select = Select {
        items: vec![SelectItem::Expr(expr, "data".into())],
        ..Select::default()
    };
    render(&select, dialect(model))
}

/// How many of the written rows `ids` fail `check` (an insert or update permission
/// check), counted in the same transaction, after the write.
pub fn count_failing(
    model: &SchemaModel,
    table: TableId,
    check: &BoolExp,
    ids: &[ReturnedRow],
) -> Statement {
    let mut cx = Ctx::new(model, None);
    let table_ref = cx.table_ref(table);
    let alias = table_ref.alias.clone();
    // NULL fails a check, as in Postgres's WITH CHECK.
    let failing = Expr::NotTrue(Box::new(cx.trusted_filter(table, &alias, check)));
    let count = match model.backend {
        Backend::Postgres => Expr::Cast(Box::new(Expr::CountStar), SqlType::Builtin("text")),
        Backend::Sqlite => Expr::CountStar,
    };
    let select = Select {
        items: vec![SelectItem::Expr(count, "failing".into())],
        from: Some({
            let (ids, key) = id_params(model, table, ids);
            grafton_sql::From::RowIds {
                table: table_ref,
                ids,
                key,
            }
        }),
        filter: Some(failing),
        ..Select::default()
    };
    render(&select, dialect(model))
}

/// SQLite: the rowids of existing rows an upsert of `rows` (values in `columns` order)
/// would conflict with on `key`, read before it runs in the same write transaction,
/// so its returned rows can be told apart (inserted or updated). `None` when a key
/// column is not among the written ones: its value is a default the rows do not show.
pub fn conflicting(
    model: &SchemaModel,
    table: TableId,
    key: &[usize],
    columns: &[usize],
    rows: &[Vec<Json>],
) -> Option<Statement> {
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
                            sqlite_type(&t.columns[k].scalar),
                            false,
                        ))),
                    })
                    .collect(),
            )
        })
        .collect();
    let select = Select {
        items: vec![SelectItem::Expr(
            Expr::column(&alias, "rowid"),
            "rowid".into(),
        )],
        from: Some(from),
        filter: Some(Expr::Or(matches)),
        ..Select::default()
    };
    Some(render(&select, dialect(model)))
}
