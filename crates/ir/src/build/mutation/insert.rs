//! Insert rows (nested through relationships) and their `on_conflict`.

use crate::build::{Builder, IrError};
use crate::input::Input;
use crate::types::*;
use apollo_compiler::executable::Field as AstField;
use grafton_schema::{TableField, TableId};

impl<'a> Builder<'a> {
    pub(super) fn insert_row(
        &mut self,
        table: TableId,
        input: Input<'a>,
        path: &str,
    ) -> Result<InsertRow, IrError> {
        let model = self.model;
        let info = &model.tables[table];
        let names = &model.mutation_names;
        let mut row = InsertRow::default();
        for (key, v) in self.vars.object(input) {
            // Inserted columns need not be readable: look them up among all columns
            // (the role's insert input type has already limited which ones arrive).
            if let Some(c) = model.column_by_name(table, key) {
                if let Some(json) = self.value(v) {
                    self.check_value(table, c, &json, &format!("{path}.{key}"))?;
                    row.columns.push((c, json));
                }
                continue;
            }
            match info.fields.get(key) {
                Some(TableField::Object(r)) | Some(TableField::Array(r)) => {
                    let rel = &model.relationships[*r];
                    let fields = self.vars.object(v);
                    if fields.is_empty() {
                        continue;
                    }
                    let mut rows = Vec::new();
                    let mut on_conflict = None;
                    for (k, inner) in fields {
                        if k == names.data {
                            for (i, item) in self.vars.list(inner).into_iter().enumerate() {
                                let p = format!("{path}.{key}.data[{i}]");
                                rows.push(self.insert_row(rel.target, item, &p)?);
                            }
                        } else if k == names.on_conflict {
                            on_conflict = self.on_conflict(rel.target, inner)?;
                        }
                    }
                    let nested = Nested {
                        rel: *r,
                        rows,
                        on_conflict,
                    };
                    // A related row that copies this row's key goes in after it.
                    match info.fields.get(key) {
                        Some(TableField::Object(_)) if !rel.after_parent => {
                            row.objects.push(nested)
                        }
                        _ => row.arrays.push(nested),
                    }
                }
                _ => {
                    return Err(IrError::Validation(format!(
                        "{path}: '{key}' is not a column or relationship of '{}'",
                        info.type_name
                    )))
                }
            }
        }
        self.check_nested(table, &row, path)?;
        Ok(row)
    }

    /// A key column filled from a relationship must not also be given a value.
    pub(super) fn check_nested(
        &self,
        table: TableId,
        row: &InsertRow,
        path: &str,
    ) -> Result<(), IrError> {
        let model = self.model;
        for nested in &row.objects {
            let rel = &model.relationships[nested.rel];
            for &(source, _) in &rel.mapping {
                if row.columns.iter().any(|(c, _)| *c == source) {
                    return Err(IrError::Validation(format!(
                        "{path}: '{}' cannot be given together with the relationship '{}', which sets it",
                        model.tables[table].column_fields[source], rel.name
                    )));
                }
            }
        }
        for nested in &row.arrays {
            let rel = &model.relationships[nested.rel];
            for child in &nested.rows {
                for &(_, target) in &rel.mapping {
                    if child.columns.iter().any(|(c, _)| *c == target) {
                        return Err(IrError::Validation(format!(
                            "{path}.{}: '{}' is set by the relationship and cannot be given",
                            rel.name, model.tables[rel.target].column_fields[target]
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn on_conflict_arg(
        &mut self,
        table: TableId,
        field: &'a AstField,
    ) -> Result<Option<OnConflict>, IrError> {
        let name = self.model.mutation_names.on_conflict.clone();
        match self.arg(field, &name) {
            Some(v) => self.on_conflict(table, v),
            None => Ok(None),
        }
    }

    pub(super) fn on_conflict(
        &mut self,
        table: TableId,
        input: Input<'a>,
    ) -> Result<Option<OnConflict>, IrError> {
        let model = self.model;
        let names = &model.mutation_names;
        let info = &model.tables[table];
        let fields = self.vars.object(input);
        if fields.is_empty() {
            return Ok(None);
        }
        let mut columns = None;
        let mut update_columns = Vec::new();
        let mut filter = None;
        for (k, v) in fields {
            if k == names.constraint {
                let name = self.vars.enum_name(v).unwrap_or_default();
                columns = Some(info.constraints.get(name).cloned().ok_or_else(|| {
                    IrError::Validation(format!(
                        "'{name}' is not a constraint of '{}'",
                        info.type_name
                    ))
                })?);
            } else if k == names.update_columns {
                for item in self.vars.list(v) {
                    if let Some(col) = self.vars.enum_name(item) {
                        update_columns.push(self.write_column(table, col)?);
                    }
                }
            } else if k == model.args.where_ && self.vars.deref(v).is_some() {
                filter = Some(self.bool_exp(table, v)?);
            }
        }
        let columns = columns.ok_or_else(|| {
            IrError::Validation(format!("on_conflict needs a '{}'", names.constraint))
        })?;
        Ok(Some(OnConflict {
            columns,
            update_columns,
            filter,
        }))
    }
}
