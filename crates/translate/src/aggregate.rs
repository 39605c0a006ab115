//! An aggregate's values (`count`, `sum`, `avg`, …) over rows aliased `alias`.

use crate::ctx::{json_kind, Ctx};
use crate::filter::column_value;
use grafton_ir::{AggregateValue, FuncField};
use grafton_schema::{ComputedReturns, TableId};
use grafton_sql::{Expr, JsonKind};

impl Ctx<'_> {
    /// The pairs of an aggregate's `aggregate { … }` object.
    pub(crate) fn aggregate_values(
        &self,
        table: TableId,
        alias: &str,
        values: &[(String, AggregateValue)],
    ) -> Vec<(String, Expr)> {
        let t = self.model.table(table);
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
                                                Box::new(column_value(self.model, col, alias)),
                                            )),
                                            kind,
                                        )
                                    }
                                    FuncField::Computed(id) => {
                                        let kind = match &self.model.computed[*id].returns {
                                            _ if func.is_statistical() => JsonKind::Float,
                                            ComputedReturns::Scalar(kind) => json_kind(kind),
                                            ComputedReturns::Rows(_) => JsonKind::Json,
                                        };
                                        let value = self.computed_value(*id, alias);
                                        Expr::ToJson(
                                            Box::new(Expr::Agg(*func, Box::new(value))),
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
}
