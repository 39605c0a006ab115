//! Which columns a list's or aggregate's inner query selects: only those its outer
//! query reads, so a narrower row goes through the sort, the page and the aggregate.

use crate::ctx::{ORDER_KEY, ROW_KEY};
use grafton_sql::{Expr, OrderItem, Select, SelectItem};

/// Puts in front of the inner query's select list (which holds the order keys) the
/// columns of `alias` that `outer` reads through `outer_alias`, or the whole row if
/// it reads that. A narrower row is cheaper to sort, page and hand to the aggregate.
/// `row` is the inner alias's whole row, which the outer query reads as [`ROW_KEY`].
pub(crate) fn select_read_columns(
    inner: &mut Select,
    alias: &str,
    outer_alias: &str,
    outer: &Expr,
    row: Expr,
) {
    let items: Vec<SelectItem> = match grafton_sql::columns_of(outer_alias, [outer]) {
        Some(columns) => columns
            .into_iter()
            .filter(|c| !c.starts_with(ORDER_KEY) && !has_item(inner, c))
            .map(|c| match c.as_str() {
                ROW_KEY => SelectItem::Expr(row.clone(), c),
                _ => SelectItem::Expr(Expr::column(alias, &c), c),
            })
            .collect(),
        None => {
            // `alias.*` has the order keys projected under their own column names
            // already: kept twice, a reference to them would be ambiguous.
            inner.items.retain(|i| {
                !matches!(i, SelectItem::Expr(Expr::Column { table, column }, name)
                    if table == alias && column == name)
            });
            vec![SelectItem::AllFrom(alias.to_owned())]
        }
    };
    inner.items.splice(0..0, items);
}

/// Exposes the inner query's sort keys as columns so the outer aggregate can
/// keep the same order (aggregate input order is otherwise unspecified).
pub(crate) fn project_order_keys(
    inner: &mut Select,
    outer_alias: &str,
    order: &[OrderItem],
) -> Vec<OrderItem> {
    order
        .iter()
        .enumerate()
        .map(|(i, o)| {
            // A plain column is projected under its own name, so a field that
            // reads it too shares it.
            let name = match &o.expr {
                Expr::Column { column, .. } if !has_item(inner, column) => column.clone(),
                _ => format!("{ORDER_KEY}{i}"),
            };
            if !has_item(inner, &name) {
                inner
                    .items
                    .push(SelectItem::Expr(o.expr.clone(), name.clone()));
            }
            OrderItem {
                expr: Expr::column(outer_alias, &name),
                ..o.clone()
            }
        })
        .collect()
}

/// Whether the select list already has an item named `name`.
pub(crate) fn has_item(select: &Select, name: &str) -> bool {
    select
        .items
        .iter()
        .any(|i| matches!(i, SelectItem::Expr(_, n) if n == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_row_read_keeps_every_column_once() {
        let mut inner = Select {
            items: vec![
                SelectItem::Expr(Expr::column("_t0", "id"), "id".into()),
                SelectItem::Expr(Expr::Int(1), format!("{ORDER_KEY}1")),
            ],
            ..Select::default()
        };
        let whole = Expr::Subquery(Box::new(Select {
            items: vec![SelectItem::AllFrom("_e1".into())],
            ..Select::default()
        }));
        select_read_columns(&mut inner, "_t0", "_e1", &whole, Expr::RowRef("_t0".into()));
        assert_eq!(
            inner.items,
            vec![
                SelectItem::AllFrom("_t0".into()),
                SelectItem::Expr(Expr::Int(1), format!("{ORDER_KEY}1")),
            ]
        );
        // Reading columns: those, in front, each once.
        let mut inner = Select {
            items: vec![SelectItem::Expr(Expr::column("_t0", "id"), "id".into())],
            ..Select::default()
        };
        let object = Expr::JsonObject(vec![
            ("id".into(), Expr::column("_e1", "id")),
            ("name".into(), Expr::column("_e1", "name")),
        ]);
        select_read_columns(
            &mut inner,
            "_t0",
            "_e1",
            &object,
            Expr::RowRef("_t0".into()),
        );
        assert_eq!(
            inner.items,
            vec![
                SelectItem::Expr(Expr::column("_t0", "name"), "name".into()),
                SelectItem::Expr(Expr::column("_t0", "id"), "id".into()),
            ]
        );
    }
}
