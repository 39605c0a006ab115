//! `t_aggregate` fields (root or through an array relationship): the aggregate
//! values over the rows the arguments select, and `nodes`.

use crate::ctx::Ctx;
use crate::read_columns::{project_order_keys, select_read_columns};
use grafton_ir::{Aggregate, AggregateField, Rows};
use grafton_schema::RelId;
use grafton_sql::{Expr, From, OrderItem, Select, SelectItem};

impl Ctx<'_> {
    /// `{aggregate: {…}, nodes: […]}` over the rows selected by the arguments.
    pub(crate) fn aggregate(&mut self, agg: &Aggregate, parent: Option<(RelId, &str)>) -> Expr {
        let capped = self.table_rules(agg.table).and_then(|r| r.limit).is_some();
        let nodes = agg
            .fields
            .iter()
            .any(|(_, f)| matches!(f, AggregateField::Nodes(_)));
        if !(capped && nodes) {
            return self.over_rows(agg, parent, |cx, alias, order| {
                Expr::JsonObject(cx.aggregate_fields(agg, alias, order))
            });
        }
        // Under a role's row limit, `nodes` is a capped list of its own, while the
        // aggregate values still cover every row the role may read (as in Hasura).
        let mut pairs = Vec::with_capacity(agg.fields.len());
        for (key, field) in &agg.fields {
            let expr = match field {
                AggregateField::Typename(name) => Expr::Str(name.clone()),
                AggregateField::Nodes(fields) => self.rows(
                    &Rows {
                        table: agg.table,
                        args: agg.args.clone(),
                        fields: fields.clone(),
                        single: false,
                    },
                    parent,
                ),
                AggregateField::Aggregate(values) => self.over_rows(agg, parent, |cx, alias, _| {
                    Expr::JsonObject(cx.aggregate_values(agg.table, alias, values))
                }),
            };
            pairs.push((key.clone(), expr));
        }
        Expr::JsonObject(pairs)
    }

    /// `(SELECT item FROM (rows of the aggregate, uncapped) AS alias)`: `item` is built
    /// over the outer alias, with the order the rows' JSON must keep.
    fn over_rows(
        &mut self,
        agg: &Aggregate,
        parent: Option<(RelId, &str)>,
        item: impl FnOnce(&mut Self, &str, &[OrderItem]) -> Expr,
    ) -> Expr {
        let (mut inner, alias, order) = self.base(agg.table, &agg.args, parent, false, None);
        let outer_alias = self.alias("_e");
        self.wrapped.insert(outer_alias.clone());
        let agg_order = project_order_keys(&mut inner, &outer_alias, &order);
        let item = item(self, &outer_alias, &agg_order);
        let row = self.row_value(&alias);
        select_read_columns(&mut inner, &alias, &outer_alias, &item, row);
        Expr::JsonSubquery(Box::new(Select {
            items: vec![SelectItem::Expr(item, "root".into())],
            from: Some(From::Subquery {
                select: Box::new(inner),
                alias: outer_alias,
            }),
            ..Select::default()
        }))
    }

    /// The pairs of an aggregate object over rows aliased `alias`.
    fn aggregate_fields(
        &mut self,
        agg: &Aggregate,
        alias: &str,
        order: &[OrderItem],
    ) -> Vec<(String, Expr)> {
        let mut pairs = Vec::with_capacity(agg.fields.len());
        for (key, field) in &agg.fields {
            let expr = match field {
                AggregateField::Typename(name) => Expr::Str(name.clone()),
                AggregateField::Nodes(fields) => Expr::JsonAgg {
                    expr: Box::new(self.row_object(agg.table, alias, fields)),
                    order_by: order.to_vec(),
                },
                AggregateField::Aggregate(values) => {
                    Expr::JsonObject(self.aggregate_values(agg.table, alias, values))
                }
            };
            pairs.push((key.clone(), expr));
        }
        pairs
    }
}
