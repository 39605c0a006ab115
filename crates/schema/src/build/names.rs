//! Every name a table brings into the schema, claimed before the table is kept: a
//! table whose names collide with GraphQL's own (`String`, `query_root`), with the
//! schema's shared types (`order_by`, `jsonb_comparison_exp`, an enum), or with
//! another table's (`items_aggregate` beside `items`) is skipped with a warning, so
//! whoever can create a table cannot stop the API at its next start.

use super::AGG_FUNCS;
use crate::naming::{graphql_safe, Naming};
use grafton_catalog::Catalog;
use std::collections::HashSet;

/// The suffixes of the types generated for a table (`venues_bool_exp`, …).
const TYPE_SUFFIXES: [&str; 20] = [
    "",
    "_bool_exp",
    "_order_by",
    "_select_column",
    "_aggregate",
    "_aggregate_fields",
    "_aggregate_order_by",
    "_insert_input",
    "_obj_rel_insert_input",
    "_arr_rel_insert_input",
    "_on_conflict",
    "_constraint",
    "_update_column",
    "_mutation_response",
    "_set_input",
    "_inc_input",
    "_pk_columns_input",
    "_updates",
    "_stream_cursor_input",
    "_stream_cursor_value_input",
];

/// The jsonb operators' input types, per table.
const JSONB_SUFFIXES: [&str; 5] = [
    "_append_input",
    "_prepend_input",
    "_delete_key_input",
    "_delete_elem_input",
    "_delete_at_path_input",
];

/// The root fields generated for a table, `{}` standing for its name.
const FIELD_FORMS: [&str; 11] = [
    "{}",
    "{}_by_pk",
    "{}_aggregate",
    "insert_{}",
    "insert_{}_one",
    "update_{}",
    "update_{}_by_pk",
    "update_{}_many",
    "delete_{}",
    "delete_{}_by_pk",
    "{}_stream",
];

/// The scalars' base names (built-in ones keep their names under every naming).
const SCALARS: [&str; 17] = [
    "Int",
    "Float",
    "String",
    "Boolean",
    "ID",
    "bigint",
    "numeric",
    "uuid",
    "timestamptz",
    "timestamp",
    "date",
    "time",
    "timetz",
    "interval",
    "json",
    "jsonb",
    "bytea",
];

/// Type and root field names already in use.
pub(super) struct Taken {
    types: HashSet<String>,
    fields: HashSet<String>,
}

impl Taken {
    /// The names the schema uses whatever its tables: root types, `order_by`, every
    /// scalar and its comparison type, jsonb's cast type, and the database's enums.
    pub(super) fn reserved(naming: Naming, catalog: &Catalog, default_schema: &str) -> Self {
        let mut types: HashSet<String> = ["query_root", "mutation_root", "subscription_root"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        types.insert(naming.type_name("order_by"));
        types.insert(naming.type_name("jsonb_cast_exp"));
        types.insert(naming.type_name(super::stream::CURSOR_ORDERING));
        let enums = catalog.enums.iter().map(|e| {
            if e.schema == default_schema {
                graphql_safe(&e.name)
            } else {
                graphql_safe(&format!("{}_{}", e.schema, e.name))
            }
        });
        for base in SCALARS.iter().map(|s| s.to_string()).chain(enums) {
            types.insert(naming.scalar(&base));
            types.insert(naming.type_name(&format!("{base}_comparison_exp")));
        }
        Taken {
            types,
            fields: HashSet::new(),
        }
    }

    /// Claims every name table `base` brings; on a clash claims nothing and returns
    /// the name already taken.
    pub(super) fn claim(&mut self, naming: Naming, base: &str) -> Result<(), String> {
        let funcs = AGG_FUNCS
            .iter()
            .flat_map(|(_, f)| [format!("_{f}_fields"), format!("_{f}_order_by")]);
        let suffixes = TYPE_SUFFIXES
            .iter()
            .chain(JSONB_SUFFIXES.iter())
            .map(|s| s.to_string())
            .chain(funcs);
        let types: Vec<String> = suffixes
            .map(|s| naming.type_name(&format!("{base}{s}")))
            .collect();
        let fields: Vec<String> = FIELD_FORMS
            .iter()
            .map(|f| naming.field(&f.replace("{}", base)))
            .collect();
        if let Some(t) = types.iter().find(|t| self.types.contains(*t)) {
            return Err(t.clone());
        }
        if let Some(f) = fields.iter().find(|f| self.fields.contains(*f)) {
            return Err(f.clone());
        }
        self.types.extend(types);
        self.fields.extend(fields);
        Ok(())
    }
}
