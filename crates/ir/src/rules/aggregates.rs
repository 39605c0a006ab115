//! Aggregate predicates in rules, as Hasura's metadata writes them:
//! `{"articles_aggregate": {"count": {"predicate": {"_gt": 2}, "filter": {…},
//! "distinct": true, "arguments": ["id"]}}}`, and `bool_and` / `bool_or`.

use super::{operator, Op, Operand, Result, RuleReader};
use crate::types::{AggregatePredicate, BoolExp, PredicateFunc};
use grafton_catalog::ScalarKind;
use grafton_schema::{RelId, TableId};
use serde_json::Value as Json;

impl RuleReader<'_> {
    /// `<rel>_aggregate: {count | bool_and | bool_or: {…}}` on the related rows.
    pub(super) fn aggregate(
        &mut self,
        rel: RelId,
        root: TableId,
        value: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let Json::Object(funcs) = value else {
            return Err(format!(
                "{path}: expected {{count | bool_and | bool_or: {{…}}}}"
            ));
        };
        let target = self.model().relationships[rel].target;
        let mut all = Vec::with_capacity(funcs.len());
        for (name, spec) in funcs {
            let here = format!("{path}.{name}");
            let Json::Object(spec) = spec else {
                return Err(format!(
                    "{here}: expected {{predicate, filter, arguments, distinct}}"
                ));
            };
            if let Some(extra) = spec.keys().find(|k| {
                !matches!(
                    k.as_str(),
                    "predicate" | "filter" | "arguments" | "distinct"
                )
            }) {
                return Err(format!("{here}: unexpected key '{extra}'"));
            }
            let columns = match spec.get("arguments") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::String(c)) => vec![self.argument(target, c, &here)?],
                Some(Json::Array(items)) => items
                    .iter()
                    .map(|c| match c {
                        Json::String(c) => self.argument(target, c, &here),
                        other => Err(format!(
                            "{here}.arguments: expected column names, not {other}"
                        )),
                    })
                    .collect::<Result<Vec<_>>>()?,
                Some(other) => {
                    return Err(format!(
                        "{here}.arguments: expected column names, not {other}"
                    ))
                }
            };
            let distinct = match spec.get("distinct") {
                None | Some(Json::Null) => false,
                Some(Json::Bool(b)) => *b,
                Some(other) => {
                    return Err(format!("{here}.distinct: expected a boolean, not {other}"))
                }
            };
            let (func, kind) = match name.as_str() {
                "count" => (PredicateFunc::Count { columns, distinct }, ScalarKind::Int),
                "bool_and" | "bool_or" => {
                    let column = match columns.as_slice() {
                        [c] if self.model().table(target).columns[*c].scalar
                            == ScalarKind::Boolean =>
                        {
                            *c
                        }
                        _ => return Err(format!("{here}.arguments: expected one boolean column")),
                    };
                    let func = if name == "bool_and" {
                        PredicateFunc::BoolAnd(column)
                    } else {
                        PredicateFunc::BoolOr(column)
                    };
                    (func, ScalarKind::Boolean)
                }
                other => {
                    return Err(format!(
                        "{here}: unknown aggregate '{other}' (count, bool_and, bool_or)"
                    ))
                }
            };
            let filter = match spec.get("filter") {
                None | Some(Json::Null) => None,
                Some(f) => Some(self.bool_exp(target, root, f, &format!("{here}.filter"))?),
            };
            let Some(Json::Object(ops)) = spec.get("predicate") else {
                return Err(format!("{here}: missing predicate ({{_gt: 2}})"));
            };
            let mut predicate = Vec::with_capacity(ops.len());
            for (op_name, operand) in ops {
                let at = format!("{here}.predicate.{op_name}");
                let (op, expects) = match operator(op_name) {
                    Some(Op::Value(
                        op,
                        expects @ (Operand::Same | Operand::List | Operand::Bool),
                    )) if grafton_schema::ops_for(&kind, self.model().backend).contains(&op) => {
                        (op, expects)
                    }
                    _ => return Err(format!("{at}: not an operator of {kind:?}")),
                };
                let db_type = if kind == ScalarKind::Int {
                    "integer"
                } else {
                    "boolean"
                };
                predicate.push((op, self.value_of(&kind, db_type, operand, expects, &at)?));
            }
            all.push(BoolExp::Aggregate(Box::new(AggregatePredicate {
                rel,
                func,
                filter,
                predicate,
            })));
        }
        Ok(match all.len() {
            1 => all.pop().unwrap_or(BoolExp::And(Vec::new())),
            _ => BoolExp::And(all),
        })
    }

    /// A column of `table` named in `arguments`.
    fn argument(&self, table: TableId, name: &str, path: &str) -> Result<usize> {
        self.column(table, name)
            .ok_or_else(|| format!("{path}.arguments: no column '{name}'"))
    }
}
