//! `order_by` → SQL sort keys, including relationship columns and array aggregates.

use crate::ctx::Ctx;
use grafton_ir::{Aggregated, Args, OrderTarget};
use grafton_schema::TableId;
use grafton_sql::{Direction, Expr, OrderItem, Select, SelectItem};

impl Ctx<'_> {
    /// The sort keys for `args` over `alias`. Without `order_by`, a paginated request
    /// (or a `distinct_on`) is ordered by the distinct columns then the primary key, so
    /// pages are deterministic and Postgres can walk the primary key index.
    pub(crate) fn order_items(
        &mut self,
        table: TableId,
        alias: &str,
        args: &Args,
    ) -> Vec<OrderItem> {
        if args.order_by.is_empty() {
            // A role's row limit pages the list too: keep which rows it gets stable.
            let capped = self.table_rules(table).is_some_and(|r| r.limit.is_some());
            if !args.paginated() && !capped && args.distinct_on.is_empty() {
                return Vec::new();
            }
            let t = self.model.table(table);
            let mut cols = args.distinct_on.clone();
            for &c in &self.model.tables[table].primary_key {
                if !cols.contains(&c) {
                    cols.push(c);
                }
            }
            return cols
                .into_iter()
                .map(|c| OrderItem {
                    expr: Expr::column(alias, &t.columns[c].name),
                    direction: Direction::Asc,
                    nulls: if t.columns[c].nullable {
                        Some(grafton_sql::Nulls::Last)
                    } else {
                        None
                    },
                })
                .collect();
        }
        let mut out = Vec::new();
        for o in &args.order_by {
            let (expr, nullable) = self.order_expr(table, alias, &o.target);
            out.push(OrderItem {
                expr,
                direction: o.direction,
                // A non-null key needs no NULLS clause, which keeps index order usable.
                nulls: if nullable { o.nulls } else { None },
            });
        }
        out
    }

    /// The expression to sort on, and whether it can be NULL.
    fn order_expr(&mut self, table: TableId, alias: &str, target: &OrderTarget) -> (Expr, bool) {
        match target {
            OrderTarget::Column(c) => {
                let col = &self.model.table(table).columns[*c];
                (Expr::column(alias, &col.name), col.nullable)
            }
            OrderTarget::Computed(id) => (self.computed_value(*id, alias), true),
            OrderTarget::Object(rel, inner) => {
                let target_table = self.model.relationships[*rel].target;
                let (from, child, join) = self.related(*rel, alias);
                let (expr, _) = self.order_expr(target_table, &child, inner);
                let sub = Select {
                    items: vec![SelectItem::Expr(expr, "v".into())],
                    from: Some(from),
                    filter: Some(join),
                    limit: Some(Expr::Int(1)),
                    ..Select::default()
                };
                // No related row also gives NULL.
                (Expr::Subquery(Box::new(sub)), true)
            }
            OrderTarget::ArrayCount(rel) => {
                let (from, _, join) = self.related(*rel, alias);
                let sub = Select {
                    items: vec![SelectItem::Expr(Expr::CountStar, "v".into())],
                    from: Some(from),
                    filter: Some(join),
                    ..Select::default()
                };
                (Expr::Subquery(Box::new(sub)), false)
            }
            OrderTarget::ComputedCount(id) | OrderTarget::ComputedAggregate(id, ..) => {
                let Some((target_table, from, child, rule)) = self.computed_rows(*id, alias) else {
                    return (Expr::Null, true);
                };
                let (value, nullable) = match target {
                    OrderTarget::ComputedAggregate(_, func, of) => {
                        let value = self.aggregated(target_table, &child, of);
                        (Expr::Agg(*func, Box::new(value)), true)
                    }
                    _ => (Expr::CountStar, false),
                };
                let sub = Select {
                    items: vec![SelectItem::Expr(value, "v".into())],
                    from: Some(from),
                    filter: rule,
                    ..Select::default()
                };
                (Expr::Subquery(Box::new(sub)), nullable)
            }
            OrderTarget::ArrayAggregate(rel, func, of) => {
                let target_table = self.model.relationships[*rel].target;
                let (from, child, join) = self.related(*rel, alias);
                let value = self.aggregated(target_table, &child, of);
                let sub = Select {
                    items: vec![SelectItem::Expr(
                        Expr::Agg(*func, Box::new(value)),
                        "v".into(),
                    )],
                    from: Some(from),
                    filter: Some(join),
                    ..Select::default()
                };
                (Expr::Subquery(Box::new(sub)), true)
            }
        }
    }

    /// What an aggregate order key aggregates, on the row `alias` of `table`.
    fn aggregated(&mut self, table: TableId, alias: &str, of: &Aggregated) -> Expr {
        match of {
            // As the aggregate field reads it: an unmapped column as its text.
            Aggregated::Column(c) => self.column_value(table, alias, *c),
            Aggregated::Computed(id) => self.computed_value(*id, alias),
        }
    }
}
