//! An aggregate's values (`count`, `sum`, `avg`, …) over rows aliased `alias`.

use crate::filter::column_value;
use crate::select::json_kind;
use grafton_catalog::{Backend, Table};
use grafton_ir::{AggregateValue, FuncField};
use grafton_sql::{Expr, JsonKind};

/// The pairs of an aggregate's `aggregate { … }` object.
pub(crate) fn aggregate_values(
    backend: Backend,
    t: &Table,
    alias: &str,
    values: &[(String, AggregateValue)],
) -> Vec<(String, Expr)> {
    values
        .iter()
        .map(|(key, v)| {
            let expr = match v {
                AggregateValue::Typename(name) => Expr::Str(name.clone()),
                AggregateValue::Count { columns, distinct } => {
                    if columns.is_empty() {
                        Expr::CountStar
                    } else {
                        Expr::Count {
                            columns: columns
                                .iter()
                                .map(|&c| Expr::column(alias, &t.columns[c].name))
                                .collect(),
                            distinct: *distinct,
                        }
                    }
                }
                AggregateValue::Func(func, fields) => Expr::JsonObject(
                    fields
                        .iter()
                        .map(|(k, f)| {
                            let e = match f {
                                FuncField::Typename(name) => Expr::Str(name.clone()),
                                FuncField::Column(c) => {
                                    let col = &t.columns[*c];
                                    let kind = if func.is_statistical() {
                                        JsonKind::Float
                                    } else {
                                        json_kind(&col.scalar)
                                    };
                                    Expr::ToJson(
                                        Box::new(Expr::Agg(
                                            *func,
                                            Box::new(column_value(backend, col, alias)),
                                        )),
                                        kind,
                                    )
                                }
                            };
                            (k.clone(), e)
                        })
                        .collect(),
                ),
            };
            (key.clone(), expr)
        })
        .collect()
}
