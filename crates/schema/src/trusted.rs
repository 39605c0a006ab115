//! Trusted documents in the config: Hasura's allow list (query collections, scoped
//! to roles) and per-role introspection switches. Plain data: the engine enforces it.

use serde::Deserialize;

/// One allowed collection of documents.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowedCollection {
    /// The collection's name (for messages).
    #[serde(default)]
    pub name: String,
    /// The documents, as GraphQL text (an operation plus the fragments it uses).
    pub queries: Vec<String>,
    /// The roles it is allowed for; absent: every role (Hasura's `global: true`).
    #[serde(default)]
    pub roles: Option<Vec<String>>,
}

/// Hasura's `graphql_schema_introspection`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Introspection {
    /// Roles whose requests may not use `__schema` or `__type`.
    #[serde(default)]
    pub disabled_for_roles: Vec<String>,
}
