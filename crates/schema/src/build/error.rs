//! Why a schema could not be built.

/// Why a schema could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The config names something the database does not have.
    #[error("config: {0}")]
    Config(String),
    /// The database has no table Grafton can expose.
    #[error("the database has no tables to expose (schemas searched: {0})")]
    Empty(String),
    /// Metadata objects that cannot be served as written, each named with why:
    /// left out (and reported) unless `--strict-metadata`.
    #[error("{}", describe(.0))]
    Inconsistent(Vec<crate::inconsistent::Inconsistency>),
    /// The generated SDL did not validate: a bug in Grafton.
    #[error("generated schema is invalid (please report this): {0}")]
    Invalid(String),
}

fn describe(list: &[crate::inconsistent::Inconsistency]) -> String {
    let each: Vec<String> = (list.iter())
        .map(|i| format!("{}: {}", i.describe(), i.reason))
        .collect();
    format!("inconsistent metadata: {}", each.join("; "))
}
