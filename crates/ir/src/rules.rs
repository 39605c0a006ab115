//! The permission-rule language: Hasura's boolean expressions exactly as its metadata
//! writes them, compiled into the same [`BoolExp`] as a request's `where`.
//!
//! Both spellings of every combinator and operator (`_and`/`$and`, `_eq`/`$eq`, `_ne`/
//! `_neq`…), the shorthand `{column: value}` (Hasura reads it as `_eq`), relationship
//! paths, `_exists` over an unrelated table, column comparisons (`_ceq: "other"`,
//! `_ceq: ["$", "root_column"]`), jsonb operators, and session variables as scalars
//! (`X-Hasura-User-Id`) and arrays (`_in: X-Hasura-Allowed-Ids`, `{1,2,3}`).
//!
//! Anything else is refused with the path of the offending key: a rule is never
//! dropped or read loosely, because a rule read as "true" shows every row.

use crate::types::BoolExp;
use grafton_schema::{CompareOp, SchemaModel, TableField, TableId};
use serde_json::Value as Json;
use std::collections::BTreeSet;

/// Reads rules against a hasura-default model (columns by database name,
/// relationships by name), collecting the session variables they use.
pub(crate) struct RuleReader<'a> {
    model: &'a SchemaModel,
    /// Session variables the rules read (canonical names; arrays end in `[]`).
    pub(crate) session: BTreeSet<String>,
}

type Result<T> = std::result::Result<T, String>;

mod aggregates;
mod operands;
mod operators;

use operators::{combinator, operator, Op, Operand};

impl<'a> RuleReader<'a> {
    /// A reader over `model` (a hasura-default one: rules are written in Hasura's names).
    pub(crate) fn new(model: &'a SchemaModel) -> Self {
        RuleReader {
            model,
            session: BTreeSet::new(),
        }
    }

    /// The model rules are read against.
    pub(crate) fn model(&self) -> &'a SchemaModel {
        self.model
    }

    /// Compiles the rule `json` on rows of `table`; errors name `path` and below.
    pub(crate) fn read(&mut self, table: TableId, json: &Json, path: &str) -> Result<BoolExp> {
        self.bool_exp(table, table, json, path)
    }

    pub(super) fn bool_exp(
        &mut self,
        table: TableId,
        root: TableId,
        json: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let Json::Object(map) = json else {
            return Err(format!(
                "{path}: a boolean expression must be an object, not {json}"
            ));
        };
        let mut all = Vec::with_capacity(map.len());
        for (key, value) in map {
            let here = format!("{path}.{key}");
            let exp = match combinator(key) {
                Some("and") | Some("or") => {
                    let Json::Array(items) = value else {
                        return Err(format!("{here}: expected a list of boolean expressions"));
                    };
                    let items = items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| self.bool_exp(table, root, item, &format!("{here}[{i}]")))
                        .collect::<Result<Vec<_>>>()?;
                    if key.ends_with("and") {
                        BoolExp::And(items)
                    } else {
                        BoolExp::Or(items)
                    }
                }
                Some("not") => BoolExp::Not(Box::new(self.bool_exp(table, root, value, &here)?)),
                Some(_) => self.exists(root, value, &here)?,
                None => self.field(table, root, key, value, &here)?,
            };
            all.push(exp);
        }
        Ok(match all.len() {
            1 => all.pop().unwrap_or(BoolExp::And(Vec::new())),
            _ => BoolExp::And(all),
        })
    }

    /// `_exists: {_table: {schema, name} | name, _where: {…}}`.
    fn exists(&mut self, root: TableId, value: &Json, path: &str) -> Result<BoolExp> {
        let Json::Object(map) = value else {
            return Err(format!("{path}: expected {{_table, _where}}"));
        };
        if let Some(extra) = map.keys().find(|k| *k != "_table" && *k != "_where") {
            return Err(format!(
                "{path}: unexpected key '{extra}' (expected _table and _where)"
            ));
        }
        let key = match map.get("_table") {
            Some(Json::String(name)) => name.clone(),
            Some(Json::Object(t)) => {
                let name = t.get("name").and_then(Json::as_str).ok_or_else(|| {
                    format!("{path}._table: expected {{schema, name}} or a table name")
                })?;
                match t.get("schema").and_then(Json::as_str) {
                    None | Some("public") => name.to_owned(),
                    Some(schema) => format!("{schema}.{name}"),
                }
            }
            _ => return Err(format!("{path}: missing _table")),
        };
        let table = self
            .model
            .table_by_config_key(&key)
            .ok_or_else(|| format!("{path}._table: no table '{key}'"))?;
        let inner = match map.get("_where") {
            Some(w) => self.bool_exp(table, root, w, &format!("{path}._where"))?,
            None => return Err(format!("{path}: missing _where")),
        };
        Ok(BoolExp::ExistsIn(table, Box::new(inner)))
    }

    /// A column (operators or the `_eq` shorthand) or a relationship (a nested rule).
    fn field(
        &mut self,
        table: TableId,
        root: TableId,
        key: &str,
        value: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let model = self.model;
        if let Some(column) = self.column(table, key) {
            let Json::Object(ops) = value else {
                // Hasura's shorthand: `{is_published: true}` means `_eq`.
                let value = self.value(table, column, value, Operand::Same, path)?;
                return Ok(BoolExp::Compare {
                    column,
                    op: CompareOp::Eq,
                    value,
                });
            };
            let mut all = Vec::with_capacity(ops.len());
            for (name, operand) in ops {
                let here = format!("{path}.{name}");
                all.push(self.operation(table, root, column, name, operand, &here)?);
            }
            return Ok(match all.len() {
                1 => all.pop().unwrap_or(BoolExp::And(Vec::new())),
                _ => BoolExp::And(all),
            });
        }
        let info = &model.tables[table];
        match info.fields.get(key) {
            Some(TableField::Object(r)) | Some(TableField::Array(r)) => {
                let target = model.relationships[*r].target;
                let inner = self.bool_exp(target, root, value, path)?;
                Ok(BoolExp::Exists(*r, Box::new(inner)))
            }
            Some(TableField::Computed(id)) => self.computed(*id, root, key, value, path),
            Some(TableField::ArrayAggregate(r)) => self.aggregate(*r, root, value, path),
            _ if operator(key).is_some() => Err(format!(
                "{path}: operator '{key}' must be inside a column ({{column: {{{key}: …}}}})"
            )),
            _ => Err(format!(
                "{path}: '{key}' is not a column or relationship of '{}'",
                model.table(table).name
            )),
        }
    }

    /// A scalar computed field without arguments, compared (Hasura's rules allow it).
    fn computed(
        &mut self,
        id: grafton_schema::ComputedId,
        root: TableId,
        key: &str,
        value: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let model = self.model;
        let c = &model.computed[id];
        if !c.args.is_empty() {
            return Err(format!(
                "{path}: computed field '{key}' takes arguments, which a rule cannot pass"
            ));
        }
        let kind = match &c.returns {
            grafton_schema::ComputedReturns::Scalar(kind) => kind,
            // Rows of a table: some row it gives for this row satisfies the
            // nested rule, as for an array relationship.
            grafton_schema::ComputedReturns::Rows(target) => {
                let inner = self.bool_exp(*target, root, value, path)?;
                return Ok(BoolExp::ExistsComputed(id, Box::new(inner)));
            }
        };
        let db_type = match &model.catalog.functions[c.catalog_index].returns {
            grafton_catalog::Returns::Scalar(ty, _) => ty.clone(),
            grafton_catalog::Returns::Table(..) => String::new(),
        };
        let ops: Vec<(&str, &Json)> = match value {
            Json::Object(ops) => ops.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            shorthand => vec![("_eq", shorthand)],
        };
        let mut all = Vec::with_capacity(ops.len());
        for (name, operand) in ops {
            let here = format!("{path}.{name}");
            let (op, expects) = match operator(name) {
                Some(Op::Value(op, expects))
                    if grafton_schema::ops_for(kind, model.backend).contains(&op) =>
                {
                    (op, expects)
                }
                _ => return Err(format!("{here}: not an operator of computed field '{key}'")),
            };
            let value = self.value_of(kind, &db_type, operand, expects, &here)?;
            all.push(BoolExp::CompareComputed {
                field: id,
                op,
                value,
            });
        }
        Ok(match all.len() {
            1 => all.pop().unwrap_or(BoolExp::And(Vec::new())),
            _ => BoolExp::And(all),
        })
    }

    /// A column by its database name (as Hasura's metadata names it) or field name.
    pub(super) fn column(&self, table: TableId, key: &str) -> Option<usize> {
        let t = self.model.table(table);
        t.columns.iter().position(|c| c.name == key).or_else(|| {
            match self.model.tables[table].fields.get(key) {
                Some(TableField::Column(c)) => Some(*c),
                _ => None,
            }
        })
    }

    fn operation(
        &mut self,
        table: TableId,
        root: TableId,
        column: usize,
        name: &str,
        operand: &Json,
        path: &str,
    ) -> Result<BoolExp> {
        let model = self.model;
        let col = &model.table(table).columns[column];
        let kind = &col.scalar;
        match operator(name) {
            Some(Op::Value(op, expects)) => {
                if !grafton_schema::ops_for(kind, model.backend).contains(&op) {
                    return Err(format!(
                        "{path}: '{name}' does not apply to column '{}' of type {}",
                        col.name, col.db_type
                    ));
                }
                let value = self.value(table, column, operand, expects, path)?;
                Ok(BoolExp::Compare { column, op, value })
            }
            Some(Op::Column(op)) => {
                // `_cgt` on a type without ordering would fail every request.
                if !grafton_schema::ops_for(kind, model.backend).contains(&op) {
                    return Err(format!(
                        "{path}: '{name}' does not apply to column '{}' of type {}",
                        col.name, col.db_type
                    ));
                }
                let (other_table, other_name, from_root) = match operand {
                    Json::String(c) => (table, c.as_str(), false),
                    Json::Array(items) => match items.as_slice() {
                        [Json::String(c)] => (table, c.as_str(), false),
                        [Json::String(dollar), Json::String(c)] if dollar == "$" => {
                            (root, c.as_str(), true)
                        }
                        _ => {
                            return Err(format!(
                                "{path}: expected a column name, [column] or [\"$\", root_column]"
                            ))
                        }
                    },
                    _ => return Err(format!("{path}: expected a column name")),
                };
                let other = self
                    .column(other_table, other_name)
                    .ok_or_else(|| format!("{path}: no column '{other_name}'"))?;
                let other_kind = &model.table(other_table).columns[other].scalar;
                if other_kind != kind {
                    return Err(format!(
                        "{path}: '{other_name}' has another type than the column it is compared with"
                    ));
                }
                Ok(BoolExp::CompareColumns {
                    column,
                    op,
                    other,
                    root: from_root,
                })
            }
            Some(Op::Cast) => self.cast(table, column, operand, path),
            Some(Op::DWithin(op) | Op::Nband(op)) => {
                if !grafton_schema::ops_for(kind, model.backend).contains(&op) {
                    return Err(format!(
                        "{path}: '{name}' does not apply to column '{}' of type {}",
                        col.name, col.db_type
                    ));
                }
                if matches!(op, CompareOp::StDWithin | CompareOp::St3dDWithin) {
                    self.d_within(table, column, op, operand, path)
                } else {
                    self.nband(column, op, operand, path)
                }
            }
            None => Err(format!("{path}: unknown operator '{name}'")),
        }
    }
}
