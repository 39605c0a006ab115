//! What the model keeps of actions beyond their config.

use super::TableId;

/// A relationship from a custom object type to a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionRel {
    /// The custom object type.
    pub object: String,
    /// The field's name.
    pub field: String,
    /// The table.
    pub table: TableId,
    /// `object` (one row or null) or `array` (rows).
    pub single: bool,
    /// The object's field → the table's column index.
    pub mapping: Vec<(String, usize)>,
}
