//! A list field's arguments: `where`, `order_by`, `limit`, `offset`, `distinct_on`.

use super::Builder;
use crate::input::Input;
use crate::types::*;
use crate::IrError;
use apollo_compiler::executable;
use grafton_schema::{TableField, TableId};
use serde_json::Value as Json;
use std::collections::BTreeSet;

impl<'a> Builder<'a> {
    pub(super) fn args(
        &mut self,
        table: TableId,
        field: &'a executable::Field,
    ) -> Result<Args, IrError> {
        let names = &self.model.args;
        let mut args = Args::default();
        if let Some(v) = self.arg(field, &names.where_) {
            if self.vars.deref(v).is_some() {
                args.filter = Some(self.bool_exp(table, v)?);
            }
        }
        if let Some(v) = self.arg(field, &names.order_by) {
            for item in self.vars.list(v) {
                for (key, value) in self.vars.object(item) {
                    args.order_by.extend(self.order_by(table, key, value)?);
                }
            }
        }
        if let Some(v) = self.arg(field, &names.limit) {
            args.limit = self.page_value(v, "limit")?;
        }
        if let Some(v) = self.arg(field, &names.offset) {
            args.offset = self.page_value(v, "offset")?;
        }
        if let Some(v) = self.arg(field, &names.distinct_on) {
            for item in self.vars.list(v) {
                if let Some(name) = self.vars.enum_name(item) {
                    args.distinct_on.push(self.column(table, name)?);
                }
            }
            self.check_distinct_on(&args)?;
        }
        Ok(args)
    }

    /// A `limit`/`offset` value: negative literals are rejected here, variables are
    /// recorded so each request's value is checked before it reaches the database.
    pub(super) fn page_value(
        &mut self,
        v: Input<'a>,
        what: &str,
    ) -> Result<Option<Value>, IrError> {
        let value = self.vars.leaf(v);
        match &value {
            Some(Value::Variable(name)) => {
                self.non_negative.insert(name.clone());
            }
            Some(Value::Literal(Json::Number(n))) if n.as_i64().is_some_and(|i| i < 0) => {
                return Err(IrError::Validation(format!(
                    "\"{what}\" must not be negative"
                )));
            }
            _ => {}
        }
        Ok(value)
    }

    /// Postgres's DISTINCT ON needs the order to start with the distinct columns.
    pub(super) fn check_distinct_on(&self, args: &Args) -> Result<(), IrError> {
        if args.order_by.is_empty() {
            return Ok(());
        }
        let leading: BTreeSet<usize> = args
            .order_by
            .iter()
            .take(args.distinct_on.len())
            .filter_map(|o| match o.target {
                OrderTarget::Column(c) => Some(c),
                _ => None,
            })
            .collect();
        let wanted: BTreeSet<usize> = args.distinct_on.iter().copied().collect();
        if leading != wanted || args.order_by.len() < args.distinct_on.len() {
            return Err(IrError::Validation(
                "\"distinct_on\" columns must match initial \"order_by\" columns".to_owned(),
            ));
        }
        Ok(())
    }

    pub(super) fn order_by(
        &mut self,
        table: TableId,
        key: &str,
        value: Input<'a>,
    ) -> Result<Vec<OrderBy>, IrError> {
        let model = self.model;
        let info = &model.tables[table];
        let field = info.fields.get(key).copied().ok_or_else(|| {
            IrError::Validation(format!(
                "'{key}' cannot be ordered on in '{}'",
                info.type_name
            ))
        })?;
        let mut out = Vec::new();
        match field {
            TableField::Column(c) => {
                if let Some(o) = self.direction(value, OrderTarget::Column(c))? {
                    out.push(o);
                }
            }
            TableField::Computed(id) => {
                if let Some(o) = self.direction(value, OrderTarget::Computed(id))? {
                    out.push(o);
                }
            }
            TableField::Object(r) => {
                let target = model.relationships[r].target;
                for (k, v) in self.vars.object(value) {
                    for inner in self.order_by(target, k, v)? {
                        out.push(OrderBy {
                            target: OrderTarget::Object(r, Box::new(inner.target)),
                            ..inner
                        });
                    }
                }
            }
            TableField::ComputedAggregate(id) if model.computed[id].args.is_empty() => {
                let grafton_schema::ComputedReturns::Rows(target) = model.computed[id].returns
                else {
                    return Ok(out);
                };
                let count = OrderTarget::ComputedCount(id);
                let each = |func, col| OrderTarget::ComputedAggregate(id, func, col);
                out.extend(self.aggregate_order(target, value, count, each)?);
            }
            TableField::Remote(_)
            | TableField::ArrayConnection(_)
            | TableField::ComputedAggregate(_) => {
                return Err(IrError::Validation(format!(
                    "'{key}' cannot be ordered on in '{}'",
                    info.type_name
                )))
            }
            TableField::ArrayAggregate(r) | TableField::Array(r) => {
                let target = model.relationships[r].target;
                let count = OrderTarget::ArrayCount(r);
                let each = |func, col| OrderTarget::ArrayAggregate(r, func, col);
                out.extend(self.aggregate_order(target, value, count, each)?);
            }
        }
        Ok(out)
    }

    /// An aggregate's order keys (`{count: desc, max: {col: asc}}`) over the rows
    /// of `target`: `count`'s, and `each` aggregate's of a column.
    fn aggregate_order(
        &mut self,
        target: TableId,
        value: Input<'a>,
        count: OrderTarget,
        each: impl Fn(grafton_sql::AggFunc, Aggregated) -> OrderTarget,
    ) -> Result<Vec<OrderBy>, IrError> {
        let mut out = Vec::new();
        for (k, v) in self.vars.object(value) {
            if k == "count" {
                out.extend(self.direction(v, count.clone())?);
                continue;
            }
            let func = *self.model.agg_funcs.get(k).ok_or_else(|| {
                IrError::Validation(format!("unknown aggregate '{k}' in order_by"))
            })?;
            for (name, dir) in self.vars.object(v) {
                let of = match self.model.tables[target].fields.get(name) {
                    Some(TableField::Computed(id)) => Aggregated::Computed(*id),
                    _ => Aggregated::Column(self.column(target, name)?),
                };
                out.extend(self.direction(dir, each(func, of))?);
            }
        }
        Ok(out)
    }

    pub(super) fn direction(
        &mut self,
        value: Input<'a>,
        target: OrderTarget,
    ) -> Result<Option<OrderBy>, IrError> {
        let Some(name) = self.vars.enum_name(value) else {
            return Ok(None);
        };
        let (direction, nulls) = *self
            .model
            .order_values
            .get(name)
            .ok_or_else(|| IrError::Validation(format!("unknown order_by value '{name}'")))?;
        Ok(Some(OrderBy {
            target,
            direction,
            nulls,
        }))
    }
}
