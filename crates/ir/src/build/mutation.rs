//! Mutation operations → IR. Built per request: the values written are data, not
//! plan shape, and are checked here (column JSON Schemas, SQLite's missing type
//! checks) before anything reaches the database.

mod insert;
mod values;

use super::{Builder, Fields, IrError};
use crate::input::Input;
use crate::permissions::{Preset, RoleRules};
use crate::types::*;
use apollo_compiler::executable::{self, Field as AstField};
use apollo_compiler::{ast, ExecutableDocument, Node};
use grafton_schema::{CompareOp, MutationField, SchemaModel, TableId};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

/// Builds the IR of a mutation operation. `variables` are the coerced variable values
/// plus the session's variables; `rules` (a role's) add their column presets.
pub fn build_mutation(
    model: &SchemaModel,
    rules: Option<&RoleRules>,
    document: &ExecutableDocument,
    operation: &executable::Operation,
    variables: &Map<String, Json>,
) -> Result<Mutation, IrError> {
    let mut b = Builder::new(model, Some(document), variables);
    b.rules = rules;
    let mut presets = Presets { model, rules };
    let fields = b.collect(&[&operation.selection_set]);
    let mut root = Vec::new();
    for (key, group) in &fields {
        let field = group[0];
        let name = field.name.as_str();
        let value = if name == "__typename" {
            MutationRoot::Typename("mutation_root".to_owned())
        } else {
            let kind = *model.mutation_fields.get(name).ok_or_else(|| {
                IrError::Validation(format!("field '{name}' not found in type: 'mutation_root'"))
            })?;
            let mut value = b.mutation_field(kind, name, group)?;
            presets.apply(&mut value, variables)?;
            value
        };
        root.push(((*key).to_owned(), value));
    }
    Ok(Mutation {
        root,
        derived: b.derived,
    })
}

/// A role's column presets, forced onto every row it inserts or updates.
struct Presets<'r> {
    model: &'r SchemaModel,
    rules: Option<&'r RoleRules>,
}

impl Presets<'_> {
    fn apply(
        &mut self,
        root: &mut MutationRoot,
        variables: &Map<String, Json>,
    ) -> Result<(), IrError> {
        let Some(rules) = self.rules else {
            return Ok(());
        };
        let writes: Vec<&mut Write> = match root {
            MutationRoot::Write(w) => vec![w],
            MutationRoot::Many(ws) => ws.iter_mut().collect(),
            MutationRoot::Typename(_) | MutationRoot::Call(_) => Vec::new(),
        };
        for w in writes {
            match &mut w.action {
                Action::Insert { rows, .. } => {
                    for row in rows {
                        insert_presets(self.model, rules, w.table, row, variables)?;
                    }
                }
                Action::Update { ops, .. } => {
                    for (column, preset) in &rules.tables[w.table].update_set {
                        ops.retain(|o| o.column != *column);
                        let value = preset_value(preset, variables)?;
                        values::enum_key(self.model, w.table, *column, &value, "preset")?;
                        ops.push(ColumnOp {
                            column: *column,
                            op: UpdateOperator::Set,
                            value,
                        });
                    }
                }
                Action::Delete(_) => {}
            }
        }
        Ok(())
    }
}

/// Presets on a row and, through nested inserts, on the rows inserted with it.
fn insert_presets(
    model: &SchemaModel,
    rules: &RoleRules,
    table: TableId,
    row: &mut InsertRow,
    variables: &Map<String, Json>,
) -> Result<(), IrError> {
    for (column, preset) in &rules.tables[table].insert_set {
        row.columns.retain(|(c, _)| c != column);
        let value = preset_value(preset, variables)?;
        values::enum_key(model, table, *column, &value, "preset")?;
        row.columns.push((*column, value));
    }
    for nested in row.objects.iter_mut().chain(row.arrays.iter_mut()) {
        let target = model.relationships[nested.rel].target;
        for child in &mut nested.rows {
            insert_presets(model, rules, target, child, variables)?;
        }
    }
    Ok(())
}

fn preset_value(preset: &Preset, variables: &Map<String, Json>) -> Result<Json, IrError> {
    match preset {
        Preset::Value(v) => Ok(v.clone()),
        Preset::Session(name) => variables
            .get(name)
            .cloned()
            .ok_or_else(|| IrError::MissingSession(name.clone())),
    }
}

impl<'a> Builder<'a> {
    fn mutation_field(
        &mut self,
        kind: MutationField,
        name: &str,
        group: &[&'a Node<AstField>],
    ) -> Result<MutationRoot, IrError> {
        let field = group[0];
        let names = &self.model.mutation_names;
        let write = match kind {
            MutationField::Function(f) => return Ok(MutationRoot::Call(self.call_rows(f, group)?)),
            MutationField::Action(_) | MutationField::Remote(_) => {
                return Err(IrError::MixedActions)
            }
            MutationField::Insert(t) => {
                let mut rows = Vec::new();
                if let Some(v) = self.arg(field, &names.objects) {
                    for (i, item) in self.vars.list(v).into_iter().enumerate() {
                        rows.push(self.insert_row(t, item, &format!("{name}.objects[{i}]"))?);
                    }
                }
                Write {
                    table: t,
                    action: Action::Insert {
                        rows,
                        on_conflict: self.on_conflict_arg(t, field)?,
                    },
                    output: self.response(t, group)?,
                }
            }
            MutationField::InsertOne(t) => {
                let object = self.arg(field, &names.object).ok_or_else(|| {
                    IrError::Validation(format!("missing argument 'object' of '{name}'"))
                })?;
                let row = self.insert_row(t, object, &format!("{name}.object"))?;
                Write {
                    table: t,
                    action: Action::Insert {
                        rows: vec![row],
                        on_conflict: self.on_conflict_arg(t, field)?,
                    },
                    output: self.single(t, group)?,
                }
            }
            MutationField::Update(t) => {
                let filter = self.required_where(t, field, name)?;
                let ops = self.update_ops(t, &Self::args_of(field), name)?;
                Write {
                    table: t,
                    action: Action::Update { filter, ops },
                    output: self.response(t, group)?,
                }
            }
            MutationField::UpdateByPk(t) => {
                let pk = self.arg(field, &names.pk_columns);
                let pairs = match pk {
                    Some(v) => self.vars.object(v),
                    None => Vec::new(),
                };
                let filter = self.pk_filter(t, pairs)?;
                let ops = self.update_ops(t, &Self::args_of(field), name)?;
                Write {
                    table: t,
                    action: Action::Update { filter, ops },
                    output: self.single(t, group)?,
                }
            }
            MutationField::UpdateMany(t) => {
                let output = self.response(t, group)?;
                let mut writes = Vec::new();
                let updates = self.arg(field, &names.updates);
                let items = updates.map(|v| self.vars.list(v)).unwrap_or_default();
                for (i, item) in items.into_iter().enumerate() {
                    let args = self.vars.object(item);
                    let path = format!("{name}.updates[{i}]");
                    let where_name = self.model.args.where_.clone();
                    let filter = match args.iter().find(|(k, _)| *k == where_name) {
                        Some((_, v)) => self.bool_exp(t, *v)?,
                        None => {
                            return Err(IrError::Validation(format!("missing 'where' in {path}")))
                        }
                    };
                    let ops = self.update_ops(t, &args, &path)?;
                    writes.push(Write {
                        table: t,
                        action: Action::Update { filter, ops },
                        output: output.clone(),
                    });
                }
                return Ok(MutationRoot::Many(writes));
            }
            MutationField::Delete(t) => Write {
                table: t,
                action: Action::Delete(self.required_where(t, field, name)?),
                output: self.response(t, group)?,
            },
            MutationField::DeleteByPk(t) => {
                let pairs = Self::args_of(field);
                Write {
                    table: t,
                    action: Action::Delete(self.pk_filter(t, pairs)?),
                    output: self.single(t, group)?,
                }
            }
        };
        Ok(MutationRoot::Write(write))
    }

    fn args_of(field: &'a AstField) -> Vec<(&'a str, Input<'a>)> {
        field
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), Input::Ast(&a.value)))
            .collect()
    }

    fn required_where(
        &mut self,
        table: TableId,
        field: &'a AstField,
        name: &str,
    ) -> Result<BoolExp, IrError> {
        let where_ = self.model.args.where_.clone();
        match self.arg(field, &where_) {
            Some(v) if self.vars.deref(v).is_some() => self.bool_exp(table, v),
            _ => Err(IrError::Validation(format!(
                "missing argument '{where_}' of '{name}'"
            ))),
        }
    }

    /// `pk = value AND …` from `{pk_column: value}` pairs; every key column is required.
    fn pk_filter(
        &mut self,
        table: TableId,
        pairs: Vec<(&'a str, Input<'a>)>,
    ) -> Result<BoolExp, IrError> {
        let info = &self.model.tables[table];
        let mut conditions = Vec::new();
        for &col in &info.primary_key {
            let name = &info.column_fields[col];
            let value = pairs
                .iter()
                .find(|(k, _)| *k == name.as_str())
                .and_then(|(_, v)| self.vars.leaf(*v))
                .ok_or_else(|| {
                    IrError::Validation(format!("missing primary key column '{name}'"))
                })?;
            conditions.push(BoolExp::Compare {
                column: col,
                op: CompareOp::Eq,
                value,
            });
        }
        Ok(BoolExp::And(conditions))
    }

    fn update_ops(
        &mut self,
        table: TableId,
        args: &[(&'a str, Input<'a>)],
        path: &str,
    ) -> Result<Vec<ColumnOp>, IrError> {
        let model = self.model;
        // Hasura's rule: some operator must be given (an empty `_set: {}` counts),
        // unless the role's presets set columns anyway.
        let given = args
            .iter()
            .any(|(k, _)| model.mutation_names.operators.contains_key(*k));
        let presets = self
            .rules
            .is_some_and(|r| !r.tables[table].update_set.is_empty());
        if !given && !presets {
            return Err(IrError::Validation(format!(
                "{path}: at least one of the update operators (_set, _inc, …) is expected"
            )));
        }
        let mut ops = Vec::new();
        for (op, _) in UpdateOperator::ALL {
            let Some((arg, value)) = args
                .iter()
                .find(|(k, _)| model.mutation_names.operators.get(*k) == Some(&op))
            else {
                continue;
            };
            for (key, v) in self.vars.object(*value) {
                let Some(json) = self.value(v) else { continue };
                let column = self.write_column(table, key)?;
                if op == UpdateOperator::Set {
                    self.check_value(table, column, &json, &format!("{path}.{arg}.{key}"))?;
                }
                ops.push(ColumnOp {
                    column,
                    op,
                    value: json,
                });
            }
        }
        // No operator (or an empty `_set: {}`) is allowed, as in Hasura: the role's
        // presets may still set columns; with none, the update changes no row.
        let mut seen = BTreeSet::new();
        for o in &ops {
            if !seen.insert(o.column) {
                return Err(IrError::Validation(format!(
                    "{path}: column '{}' is updated by more than one operator",
                    model.tables[table].column_fields[o.column]
                )));
            }
        }
        Ok(ops)
    }

    /// A written column by GraphQL name, readable or not.
    fn write_column(&self, table: TableId, name: &str) -> Result<usize, IrError> {
        self.model.column_by_name(table, name).ok_or_else(|| {
            IrError::Validation(format!(
                "'{name}' is not a column of '{}'",
                self.model.tables[table].type_name
            ))
        })
    }

    /// An input value as JSON; `None` for a variable the request did not provide
    /// (the field is then absent, as the GraphQL spec says).
    fn value(&mut self, input: Input<'a>) -> Option<Json> {
        match input {
            Input::Ast(ast::Value::Variable(name)) => self.vars.values.get(name.as_str()).cloned(),
            Input::Ast(v) => Some(self.vars.json_of(v)),
            Input::Json(v) => Some(v.clone()),
        }
    }

    fn response(
        &mut self,
        table: TableId,
        group: &[&'a Node<AstField>],
    ) -> Result<Output, IrError> {
        let model = self.model;
        let type_name = group[0].selection_set.ty.to_string();
        let mut out = Vec::new();
        for (key, sub) in &self.sub_fields(group) {
            let name = sub[0].name.as_str();
            let field = if name == "__typename" {
                ResponseField::Typename(type_name.clone())
            } else if name == model.mutation_names.affected_rows {
                ResponseField::AffectedRows
            } else if name == model.mutation_names.returning {
                let fields: Fields<'a> = self.sub_fields(sub);
                ResponseField::Returning(self.table_fields(table, &fields)?)
            } else {
                return Err(IrError::Validation(format!(
                    "field '{name}' not found in type: '{type_name}'"
                )));
            };
            out.push(((*key).to_owned(), field));
        }
        Ok(Output::Response(out))
    }

    fn single(&mut self, table: TableId, group: &[&'a Node<AstField>]) -> Result<Output, IrError> {
        let fields = self.sub_fields(group);
        Ok(Output::Single(self.table_fields(table, &fields)?))
    }
}
