//! Aggregate predicates: `EXISTS (SELECT FROM (SELECT count(*) AS v FROM related
//! WHERE join AND the role's rule AND filter) WHERE v > $1)`, per row of the
//! enclosing filter.

use crate::ctx::Ctx;
use crate::filter::compare_with;
use grafton_ir::{AggregatePredicate, PredicateFunc};
use grafton_schema::TableId;
use grafton_sql::{AggFunc, Expr, From, Select, SelectItem, SqlType};

impl Ctx<'_> {
    /// The predicate over the related rows of the row aliased `alias`; rows the
    /// role cannot read are not counted (its rule is in the subquery, as in a list).
    #[inline(never)]
    pub(crate) fn aggregate_predicate(
        &mut self,
        alias: &str,
        p: &AggregatePredicate,
        root: (TableId, &str),
    ) -> Expr {
        let target = self.model.relationships[p.rel].target;
        let (from, child, join) = self.related(p.rel, alias);
        let columns = &self.model.table(target).columns;
        let column = |c: usize| Expr::column(&child, &columns[c].name);
        let (value, ty) = match &p.func {
            PredicateFunc::Count { columns, .. } if columns.is_empty() => {
                (Expr::CountStar, SqlType::Builtin("int8"))
            }
            PredicateFunc::Count { columns, distinct } => (
                Expr::Count {
                    columns: columns.iter().map(|&c| column(c)).collect(),
                    distinct: *distinct,
                },
                SqlType::Builtin("int8"),
            ),
            PredicateFunc::BoolAnd(c) => (
                Expr::Agg(AggFunc::BoolAnd, Box::new(column(*c))),
                SqlType::Builtin("bool"),
            ),
            PredicateFunc::BoolOr(c) => (
                Expr::Agg(AggFunc::BoolOr, Box::new(column(*c))),
                SqlType::Builtin("bool"),
            ),
        };
        let mut conditions = vec![join];
        if let Some(f) = &p.filter {
            // Only truth counts inside the subquery, whatever encloses it.
            let was = std::mem::replace(&mut self.negated, false);
            conditions.push(self.filter_in(target, &child, f, root));
            self.negated = was;
        }
        // `EXISTS (SELECT FROM (SELECT agg AS v …) WHERE v op $1 …)`, as Hasura
        // writes it: true or false, never NULL (a `bool_and` of no rows is NULL,
        // and `_not` of NULL would drop the row), and one aggregate for all the
        // predicate's comparisons.
        let aggregated = Select {
            items: vec![SelectItem::Expr(value, "v".to_owned())],
            from: Some(from),
            filter: Some(Expr::And(conditions)),
            ..Select::default()
        };
        let alias = self.alias("_p");
        let subject = Expr::column(&alias, "v");
        Expr::Exists(Box::new(Select {
            from: Some(From::Subquery {
                select: Box::new(aggregated),
                alias,
            }),
            filter: Some(Expr::And(
                (p.predicate.iter())
                    .map(|(op, v)| compare_with(subject.clone(), ty.clone(), *op, v))
                    .collect(),
            )),
            ..Select::default()
        }))
    }
}
