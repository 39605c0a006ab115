//! Checks on a value written to a column, before it reaches the database.

use crate::build::{Builder, IrError};
use grafton_catalog::{Backend, ScalarKind};
use grafton_schema::naming::is_enum_value;
use grafton_schema::TableId;
use serde_json::Value as Json;

impl<'a> Builder<'a> {
    /// Checks a value written to a column: its JSON Schema, if the config gives one, and
    /// on SQLite (which stores anything) the type checks Postgres would make.
    pub(super) fn check_value(
        &self,
        table: TableId,
        column: usize,
        value: &Json,
        path: &str,
    ) -> Result<(), IrError> {
        let model = self.model;
        if value.is_null() {
            // NULL is the absence of a value: NOT NULL, not the schema, rules on it.
            return Ok(());
        }
        if let Some(schema) = model.validators.get(&(table, column)) {
            let violations = schema.violations(value);
            if let Some(first) = violations.first() {
                let field = &model.tables[table].column_fields[column];
                return Err(IrError::InvalidInput {
                    message: format!(
                        "{path} does not match the JSON Schema of '{field}' at '{}': {}",
                        first.pointer, first.message
                    ),
                    path: path.to_owned(),
                    pointer: first.pointer.clone(),
                });
            }
        }
        enum_key(model, table, column, value, path)?;
        if model.backend == Backend::Sqlite {
            let col = &model.table(table).columns[column];
            if let Err(message) = sqlite_type_check(&col.scalar, value) {
                return Err(IrError::DataException(format!("{path}: {message}")));
            }
        }
        Ok(())
    }
}

/// A value written to an enum table's key (a preset's too) must be one the enum can
/// hold: it is served as an enum value once written, and one that cannot be would
/// make every later reload of the schema fail.
pub(crate) fn enum_key(
    model: &grafton_schema::SchemaModel,
    table: TableId,
    column: usize,
    value: &Json,
    path: &str,
) -> Result<(), IrError> {
    let t = model.table(table);
    let keyed = (model.catalog.enums.iter())
        .filter_map(|e| e.from_table.as_ref())
        .any(|e| e.schema == t.schema && e.table == t.name && e.key == t.columns[column].name);
    if !keyed || value.as_str().is_some_and(is_enum_value) {
        return Ok(());
    }
    Err(IrError::InvalidInput {
        message: format!(
            "{path}: {value} cannot be a value of the enum table '{}' (letters, digits \
             and _, not starting with a digit or __, not true, false or null)",
            t.name
        ),
        path: path.to_owned(),
        pointer: String::new(),
    })
}

/// The input checks Postgres makes on these types and SQLite does not.
fn sqlite_type_check(kind: &ScalarKind, value: &Json) -> Result<(), String> {
    let text = match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    let bad = |ty: &str| Err(format!("invalid input syntax for type {ty}: \"{text}\""));
    match kind {
        ScalarKind::Uuid => {
            let hex: String = text
                .trim_start_matches('{')
                .trim_end_matches('}')
                .chars()
                .filter(|c| *c != '-')
                .collect();
            if hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                Ok(())
            } else {
                bad("uuid")
            }
        }
        ScalarKind::BigInt => match text.trim().parse::<i64>() {
            Ok(_) => Ok(()),
            Err(_) if text.trim().parse::<i128>().is_ok() => {
                Err(format!("value \"{text}\" is out of range for type bigint"))
            }
            Err(_) => bad("bigint"),
        },
        ScalarKind::Numeric => match text.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(()),
            _ => bad("numeric"),
        },
        _ => Ok(()),
    }
}
