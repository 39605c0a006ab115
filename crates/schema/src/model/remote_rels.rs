//! Relationships from a table to a remote schema's field, as a role's schema
//! serves them.

use super::TableId;
use serde_json::{Map, Value};

/// Index into [`super::SchemaModel::remote_relationships`].
pub type RemoteRelId = usize;

/// A table's field answered by a remote schema: one call per request joins
/// every row (each distinct set of the row's values once).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRel {
    /// The field's name.
    pub name: String,
    /// The table it is a field of.
    pub table: TableId,
    /// The remote, by index into the model's `remote_schemas`.
    pub remote: usize,
    /// The row's columns the arguments read: `(database name, column index)`.
    pub lhs: Vec<(String, usize)>,
    /// The remote's fields from its query root to the one answered.
    pub path: Vec<RemoteStep>,
}

/// A remote schema's type's field answered by another remote schema (Hasura's
/// remote schema to remote schema relationship): one call per request joins
/// every object of the answer (each distinct set of its values once).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTypeRel {
    /// The type it is a field of, as served.
    pub object: String,
    /// The field's name.
    pub field: String,
    /// The remote called, by index into the model's `remote_schemas`.
    pub remote: usize,
    /// The object's fields the arguments read, in their remote's own names.
    pub lhs: Vec<String>,
    /// The called remote's fields from its query root to the one answered.
    pub path: Vec<RemoteStep>,
}

/// One field on a remote relationship's way.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteStep {
    /// The type it is a field of, as served.
    pub parent: String,
    /// Its name as served (the key of a role's presets).
    pub served: String,
    /// Its name in the remote's own names.
    pub name: String,
    /// The arguments it is given: JSON, `"$column"` the row's value.
    pub arguments: Map<String, Value>,
}
