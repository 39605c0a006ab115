//! Written rows found again: what identifies a row in each dialect, and the
//! identity lists bound as parameters (see [`Identities`]).

use super::{Dialect, Renderer};
use crate::ast::{Identities, Param, ParamValue, SqlType, TableRef};
use serde_json::Value;

impl Renderer {
    /// The columns of a row's physical identity.
    pub(super) fn identity_columns(&self) -> &'static [&'static str] {
        self.dialect.identity_columns()
    }

    /// `FROM` the identities joined to the table, numbered in list order.
    pub(super) fn identities_from(&mut self, table: &TableRef, ids: &Identities) {
        let params = self.identity_params(ids);
        match ids.key.is_empty() {
            true => self.row_ids_from(table, &params),
            false => self.key_ids_from(table, &params, &key_names(ids)),
        }
    }

    /// The row (aliased) is one of the identities.
    pub(super) fn identity_in(&mut self, alias: &str, ids: &Identities) {
        // A SQLite view written by itself is named so (see `Renderer::renamed`).
        let alias = match &self.renamed {
            Some((from, Some(name))) if from == alias => name.clone(),
            _ => alias.to_owned(),
        };
        let alias = alias.as_str();
        let params = self.identity_params(ids);
        match ids.key.is_empty() {
            true => self.row_id_in(alias, &params),
            false => self.key_in(alias, &params, &key_names(ids)),
        }
    }

    /// The identity lists as this dialect binds them.
    fn identity_params(&self, ids: &Identities) -> Vec<Param> {
        let column = |i: usize| {
            Value::Array(
                ids.rows
                    .iter()
                    .map(|r| r.get(i).cloned().unwrap_or(Value::Null))
                    .collect(),
            )
        };
        let list = |value: Value, ty: SqlType| Param {
            value: ParamValue::Literal(value),
            ty,
            list: true,
        };
        match (self.dialect, ids.key.is_empty()) {
            (Dialect::Postgres, false) => (ids.key.iter().enumerate())
                .map(|(i, (_, ty))| list(column(i), ty.clone()))
                .collect(),
            (Dialect::Sqlite, false) => {
                // One JSON array of key arrays: json_each walks the rows in order.
                let keys = (ids.rows.iter())
                    .map(|r| Value::Array(r.iter().take(ids.key.len()).cloned().collect()))
                    .collect();
                vec![list(Value::Array(keys), SqlType::Builtin("json"))]
            }
            (Dialect::Postgres, true) => vec![
                list(column(0), SqlType::Builtin("tid")),
                list(column(1), SqlType::Builtin("oid")),
            ],
            (Dialect::Sqlite, true) => vec![list(column(0), SqlType::Builtin("int8"))],
        }
    }
}

fn key_names(ids: &Identities) -> Vec<String> {
    ids.key.iter().map(|(name, _)| name.clone()).collect()
}
