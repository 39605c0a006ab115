//! Finding a table: by its config key, and its qualified name.

use crate::config::Config;
use grafton_catalog::{Catalog, Table};

/// A table's `schema.name`.
pub(super) fn qualified(t: &Table) -> String {
    format!("{}.{}", t.schema, t.name)
}

/// The config's entry (key and settings) for the catalog's table `ci`, if any.
pub(crate) fn config_entry<'c>(
    catalog: &Catalog,
    config: &'c Config,
    ci: usize,
    default_schema: &str,
) -> Option<(&'c String, &'c crate::config::TableConfig)> {
    (config.tables.iter()).find(|(k, _)| find_table(catalog, k, default_schema) == Some(ci))
}

pub(crate) fn find_table(catalog: &Catalog, key: &str, default_schema: &str) -> Option<usize> {
    match key.split_once('.') {
        Some((schema, name)) => catalog.table_index(schema, name),
        None => catalog.table_index(default_schema, key),
    }
}
