//! A list whose rows are only plain columns, on PostgreSQL, is built from the rows
//! themselves: the inner query projects each column under its response key, in the
//! response's order, and `array_to_json` (or `json_agg`) turns each row into the
//! object. That is cheaper for the database than a `json_build_object` per row (about
//! 8% of a `venues` page, docs/performance.md), and the same JSON.

use grafton_sql::{Expr, JsonKind, OrderItem, SelectItem};

/// PostgreSQL truncates longer identifiers (NAMEDATALEN - 1), which would change a key.
pub(crate) const MAX_KEY_BYTES: usize = 63;

/// PostgreSQL's cap on a row's columns (MaxHeapAttributeNumber).
pub(crate) const MAX_RECORD_COLUMNS: usize = 1600;

/// For a list's row `object` (built over `outer_alias`) and the inner query's `order`
/// (over `alias`): the inner query's select list, one column per key, and the order
/// over `outer_alias`. `None` unless every value is a column of the row (cast or not;
/// not json or jsonb, which PostgreSQL may print padded, see `Statement::compact`)
/// under a key PostgreSQL keeps whole, and every order key is one of those columns
/// read as it is.
pub(crate) fn record_row(
    object: &Expr,
    alias: &str,
    outer_alias: &str,
    order: &[OrderItem],
) -> Option<(Vec<SelectItem>, Vec<OrderItem>)> {
    let Expr::JsonObject(pairs) = object else {
        return None;
    };
    let mut items = Vec::with_capacity(pairs.len());
    for (key, value) in pairs {
        let Expr::ToJson(value, kind) = value else {
            return None;
        };
        if *kind == JsonKind::Json {
            return None;
        }
        if key.len() > MAX_KEY_BYTES {
            return None;
        }
        items.push(SelectItem::Expr(
            retarget(value, outer_alias, alias)?,
            key.clone(),
        ));
    }
    let order = order
        .iter()
        .map(|o| {
            let Expr::Column { table, column } = &o.expr else {
                return None;
            };
            // A key read through a cast would sort differently: only a bare column.
            let key = items.iter().find_map(|item| match item {
                SelectItem::Expr(
                    Expr::Column {
                        table: t,
                        column: c,
                    },
                    key,
                ) if t == alias && c == column => Some(key),
                _ => None,
            });
            (table == alias)
                .then_some(key)
                .flatten()
                .map(|key| OrderItem {
                    expr: Expr::column(outer_alias, key),
                    ..o.clone()
                })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((items, order))
}

/// `outer_alias.column` (or its cast) as `alias.column`; `None` for anything else.
fn retarget(value: &Expr, outer_alias: &str, alias: &str) -> Option<Expr> {
    let column = |e: &Expr| match e {
        Expr::Column { table, column } if table == outer_alias => Some(Expr::column(alias, column)),
        _ => None,
    };
    match value {
        Expr::Cast(inner, ty) => Some(Expr::Cast(Box::new(column(inner)?), ty.clone())),
        other => column(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grafton_sql::{Direction, SqlType};

    fn col(t: &str, c: &str) -> Expr {
        Expr::column(t, c)
    }

    fn json(e: Expr) -> Expr {
        Expr::ToJson(Box::new(e), JsonKind::Plain)
    }

    fn by(e: Expr) -> OrderItem {
        OrderItem {
            expr: e,
            direction: Direction::Asc,
            nulls: None,
        }
    }

    #[test]
    fn plain_columns_become_the_rows_own_columns_under_their_keys() {
        let object = Expr::JsonObject(vec![
            ("id".into(), json(col("_e1", "id"))),
            ("label".into(), json(col("_e1", "name"))),
            (
                "code".into(),
                json(Expr::Cast(
                    Box::new(col("_e1", "postal_code")),
                    SqlType::Builtin("text"),
                )),
            ),
        ]);
        let (items, order) =
            record_row(&object, "_t0", "_e1", &[by(col("_t0", "name"))]).expect("record");
        assert_eq!(
            items,
            vec![
                SelectItem::Expr(col("_t0", "id"), "id".into()),
                SelectItem::Expr(col("_t0", "name"), "label".into()),
                SelectItem::Expr(
                    Expr::Cast(
                        Box::new(col("_t0", "postal_code")),
                        SqlType::Builtin("text")
                    ),
                    "code".into()
                ),
            ]
        );
        // The order key is read under the key of the field that reads it.
        assert_eq!(order, vec![by(col("_e1", "label"))]);
    }

    #[test]
    fn anything_else_keeps_the_json_object() {
        let object = |value: Expr| {
            Expr::JsonObject(vec![
                ("id".into(), json(col("_e1", "id"))),
                ("x".into(), value),
            ])
        };
        let id_order = [by(col("_t0", "id"))];
        // A constant (__typename), a nested list, a key PostgreSQL would truncate.
        assert!(record_row(&object(Expr::Str("Venue".into())), "_t0", "_e1", &id_order).is_none());
        let nested = Expr::JsonSubquery(Box::default());
        assert!(record_row(&object(nested), "_t0", "_e1", &id_order).is_none());
        let long = Expr::JsonObject(vec![("k".repeat(64), json(col("_e1", "id")))]);
        assert!(record_row(&long, "_t0", "_e1", &id_order).is_none());
        // An order key the response does not read, or reads only through a cast.
        let plain = object(json(col("_e1", "name")));
        assert!(record_row(&plain, "_t0", "_e1", &[by(col("_t0", "start_at"))]).is_none());
        let cast = object(json(Expr::Cast(
            Box::new(col("_e1", "name")),
            SqlType::Builtin("text"),
        )));
        assert!(record_row(&cast, "_t0", "_e1", &[by(col("_t0", "name"))]).is_none());
        assert!(record_row(&plain, "_t0", "_e1", &id_order).is_some());
    }
}
