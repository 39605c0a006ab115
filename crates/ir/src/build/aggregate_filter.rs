//! Aggregate predicates in a request's boolean expression:
//! `articles_aggregate: {count: {arguments, distinct, filter, predicate}}`, and
//! `bool_and` / `bool_or` of a boolean column.

use super::Builder;
use crate::input::Input;
use crate::types::*;
use crate::IrError;
use grafton_schema::RelId;

impl<'a> Builder<'a> {
    /// The predicates of `<rel>_aggregate: {…}`, one per aggregate named.
    #[inline(never)]
    pub(super) fn aggregate_predicates(
        &mut self,
        rel: RelId,
        v: Input<'a>,
        all: &mut Vec<BoolExp>,
    ) -> Result<(), IrError> {
        let model = self.model;
        let naming = model.naming;
        let target = model.relationships[rel].target;
        for (name, spec) in self.vars.object(v) {
            let func = if name == naming.field("count") {
                PredicateFunc::Count {
                    columns: Vec::new(),
                    distinct: false,
                }
            } else if name == naming.field("bool_and") {
                PredicateFunc::BoolAnd(usize::MAX)
            } else if name == naming.field("bool_or") {
                PredicateFunc::BoolOr(usize::MAX)
            } else {
                return Err(IrError::Validation(format!(
                    "unknown aggregate predicate '{name}'"
                )));
            };
            if self.vars.deref(spec).is_none() {
                continue;
            }
            let mut p = AggregatePredicate {
                rel,
                func,
                filter: None,
                predicate: Vec::new(),
            };
            for (key, value) in self.vars.object(spec) {
                if key == naming.field("arguments") {
                    let mut columns = Vec::new();
                    for item in self.vars.list(value) {
                        if let Some(column) = self.vars.enum_name(item) {
                            columns.push(self.column(target, column)?);
                        }
                    }
                    match &mut p.func {
                        PredicateFunc::Count { columns: c, .. } => *c = columns,
                        PredicateFunc::BoolAnd(c) | PredicateFunc::BoolOr(c) => {
                            *c = columns.first().copied().unwrap_or(usize::MAX)
                        }
                    }
                } else if key == naming.field("distinct") {
                    if let PredicateFunc::Count { distinct, .. } = &mut p.func {
                        *distinct = self.vars.boolean(value).unwrap_or(false);
                    }
                } else if key == naming.field("filter") {
                    if self.vars.deref(value).is_some() {
                        p.filter = Some(self.bool_exp(target, value)?);
                    }
                } else if key == naming.field("predicate") {
                    for (op_name, operand) in self.vars.object(value) {
                        let op = *model.ops.get(op_name).ok_or_else(|| {
                            IrError::Validation(format!("unknown operator '{op_name}'"))
                        })?;
                        if let Some(value) = self.vars.leaf(operand) {
                            p.predicate.push((op, value));
                        }
                    }
                }
            }
            if matches!(
                p.func,
                PredicateFunc::BoolAnd(usize::MAX) | PredicateFunc::BoolOr(usize::MAX)
            ) {
                return Err(IrError::Validation(format!(
                    "'{name}' needs a boolean column in 'arguments'"
                )));
            }
            all.push(BoolExp::Aggregate(Box::new(p)));
        }
        Ok(())
    }
}
