//! Which columns of a table alias an expression reads, so a subquery can select
//! only the columns its outer query uses (a narrower row through sorts and pages).

use crate::ast::{Expr, From, OrderItem, Select, SelectItem};

/// The columns of `alias` that `exprs` read, in first-use order; `None` when one of
/// them reads the whole row (`alias.*`, a row identity, or an unqualified column).
pub fn columns_of<'a>(
    alias: &str,
    exprs: impl IntoIterator<Item = &'a Expr>,
) -> Option<Vec<String>> {
    let mut refs = Refs {
        alias,
        columns: Vec::new(),
        whole_row: false,
    };
    for e in exprs {
        refs.expr(e);
    }
    (!refs.whole_row).then_some(refs.columns)
}

struct Refs<'a> {
    alias: &'a str,
    columns: Vec<String>,
    whole_row: bool,
}

impl Refs<'_> {
    fn expr(&mut self, e: &Expr) {
        // Every variant is listed: a new one must say whether it reads columns.
        match e {
            Expr::Column { table, column } => {
                if table == self.alias && !self.columns.iter().any(|c| c == column) {
                    self.columns.push(column.clone());
                }
            }
            Expr::Param(_)
            | Expr::Str(_)
            | Expr::Int(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::CountStar => {}
            Expr::RowIdOrder(a) | Expr::RowIdIn { alias: a, .. } | Expr::RowJson(a) => {
                if a == self.alias {
                    self.whole_row = true;
                }
            }
            Expr::Compare { left, right, .. } => {
                self.expr(left);
                self.expr(right);
            }
            Expr::Pattern { expr, pattern, .. } => {
                self.expr(expr);
                self.expr(pattern);
            }
            Expr::Func { args, .. } => args.iter().for_each(|(_, e)| self.expr(e)),
            Expr::RowRef(a) => {
                if a == self.alias {
                    self.whole_row = true;
                }
            }
            Expr::CaseWhen { when, then } => {
                self.expr(when);
                self.expr(then);
            }
            Expr::ColumnUpdate {
                column, operand, ..
            } => {
                self.expr(column);
                self.expr(operand);
            }
            Expr::ReadText(inner) => self.expr(inner),
            Expr::Written { .. } => {}
            Expr::InList { expr, .. }
            | Expr::JsonTest { expr, .. }
            | Expr::JsonAt { expr, .. }
            | Expr::IsNull { expr, .. }
            | Expr::IsNullParam { expr, .. }
            | Expr::Not(expr)
            | Expr::NotTrue(expr)
            | Expr::ToJson(expr, _)
            | Expr::Agg(_, expr)
            | Expr::Least(expr, _)
            | Expr::Base64(expr)
            | Expr::Cast(expr, _) => self.expr(expr),
            Expr::And(list) | Expr::Or(list) | Expr::JsonArray(list) => {
                list.iter().for_each(|e| self.expr(e))
            }
            Expr::Count { columns, .. } => columns.iter().for_each(|e| self.expr(e)),
            Expr::JsonObject(pairs) | Expr::RowObject { pairs, .. } => {
                pairs.iter().for_each(|(_, e)| self.expr(e))
            }
            Expr::JsonAgg { expr, order_by } | Expr::FirstBy { expr, order_by } => {
                self.expr(expr);
                self.order(order_by);
            }
            Expr::Exists(s) | Expr::Subquery(s) | Expr::JsonSubquery(s) => self.select(s),
        }
    }

    fn order(&mut self, items: &[OrderItem]) {
        items.iter().for_each(|o| self.expr(&o.expr));
    }

    fn select(&mut self, s: &Select) {
        s.distinct_on.iter().for_each(|e| self.expr(e));
        for item in &s.items {
            match item {
                SelectItem::Expr(e, _) => self.expr(e),
                SelectItem::AllFrom(a) | SelectItem::Identity(a) => {
                    if a == self.alias {
                        self.whole_row = true;
                    }
                }
            }
        }
        match &s.from {
            Some(From::Subquery { select, .. }) => self.select(select),
            Some(From::Call { args, .. }) => args.iter().for_each(|(_, e)| self.expr(e)),
            Some(From::Table { .. } | From::RowIds { .. }) | None => {}
        }
        if let Some(f) = &s.filter {
            self.expr(f);
        }
        self.order(&s.order_by);
        s.limit.iter().chain(&s.offset).for_each(|e| self.expr(e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_alias_columns_once_through_subqueries() {
        let inner = Select {
            items: vec![SelectItem::Expr(Expr::column("e", "venue_id"), "x".into())],
            filter: Some(Expr::column("other", "id")),
            ..Select::default()
        };
        let exprs = [Expr::JsonObject(vec![
            ("id".into(), Expr::column("e", "id")),
            ("v".into(), Expr::JsonSubquery(Box::new(inner))),
            ("again".into(), Expr::column("e", "id")),
        ])];
        assert_eq!(
            columns_of("e", &exprs),
            Some(vec!["id".to_string(), "venue_id".to_string()])
        );
        assert_eq!(columns_of("none", &exprs), Some(vec![]));
    }

    #[test]
    fn a_whole_row_read_keeps_every_column() {
        let all = Select {
            items: vec![SelectItem::AllFrom("e".into())],
            ..Select::default()
        };
        assert_eq!(columns_of("e", &[Expr::Subquery(Box::new(all))]), None);
        assert_eq!(columns_of("e", &[Expr::RowIdOrder("e".into())]), None);
        assert_eq!(columns_of("e", &[Expr::RowJson("e".into())]), None);
    }
}
