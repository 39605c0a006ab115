//! Every name a table brings into the schema, claimed before the table is kept: a
//! table whose names collide with GraphQL's own (`String`, `query_root`), with the
//! schema's shared types (`order_by`, `jsonb_comparison_exp`, an enum), or with
//! another table's (`items_aggregate` beside `items`) is skipped with a warning, so
//! whoever can create a table cannot stop the API at its next start. A custom name
//! (config or Hasura metadata) that collides stops start-up instead, naming both:
//! it is a mistake in the configuration, not in the database.

use super::AGG_FUNCS;
use crate::naming::{graphql_safe, Naming};
use grafton_catalog::Catalog;
use std::collections::HashMap;

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

/// Type and root field names already in use, each with who uses it.
pub(super) struct Taken {
    types: HashMap<String, String>,
    fields: HashMap<String, String>,
}

impl Taken {
    /// The names the schema uses whatever its tables: root types, `order_by`, every
    /// scalar and its comparison type, jsonb's cast type, and the database's enums.
    pub(super) fn reserved(naming: Naming, catalog: &Catalog, default_schema: &str) -> Self {
        let shared = || "a type every schema has".to_owned();
        let mut types: HashMap<String, String> =
            ["query_root", "mutation_root", "subscription_root"]
                .into_iter()
                .map(|t| (t.to_owned(), shared()))
                .collect();
        for t in ["order_by", "jsonb_cast_exp", super::stream::CURSOR_ORDERING] {
            types.insert(naming.type_name(t), shared());
        }
        let enums = catalog.enums.iter().map(|e| {
            if e.schema == default_schema {
                graphql_safe(&e.name)
            } else {
                graphql_safe(&format!("{}_{}", e.schema, e.name))
            }
        });
        for base in SCALARS.iter().map(|s| s.to_string()).chain(enums) {
            types.insert(naming.scalar(&base), "a scalar or enum type".to_owned());
            let comparison = naming.type_name(&format!("{base}_comparison_exp"));
            types.insert(comparison, "a scalar's comparison type".to_owned());
        }
        Taken {
            types,
            fields: HashMap::new(),
        }
    }

    /// Claims for `owner` every name table `base` brings; on a clash claims nothing
    /// and returns the name already taken and who took it.
    pub(super) fn claim(
        &mut self,
        naming: Naming,
        base: &str,
        owner: &str,
    ) -> Result<(), (String, String)> {
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
        for (names, taken) in [(&types, &self.types), (&fields, &self.fields)] {
            if let Some((name, by)) = names.iter().find_map(|n| taken.get_key_value(n)) {
                return Err((name.clone(), by.clone()));
            }
        }
        let own = |n: String| (n, owner.to_owned());
        self.types.extend(types.into_iter().map(own));
        self.fields.extend(fields.into_iter().map(own));
        Ok(())
    }
}
