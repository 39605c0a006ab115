//! What a role may do with each table: the permissions the schema is built under.

use std::collections::BTreeSet;

/// What the schema's role may do with a table (everything, for admin).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableAccess {
    /// Reading: without it the table does not exist for the role.
    pub select: Option<SelectAccess>,
    /// Inserting: the columns the role may set (presets excluded).
    pub insert: Option<BTreeSet<usize>>,
    /// Updating: the columns the role may change (presets excluded).
    pub update: Option<BTreeSet<usize>>,
    /// Deleting.
    pub delete: bool,
}

/// What a role may read of a table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectAccess {
    /// Readable columns (also the ones it may filter and sort on).
    pub columns: BTreeSet<usize>,
    /// Whether `_aggregate` fields exist.
    pub aggregations: bool,
    /// The query root fields the table has: list, `_by_pk`, `_aggregate` (Hasura's
    /// `query_root_fields`).
    pub root_fields: RootFieldSet,
    /// The subscription root fields it has (Hasura's `subscription_root_fields`).
    pub subscription_fields: RootFieldSet,
    /// Readable columns shown only on some rows (NULL elsewhere), so nullable
    /// whatever the database says: an inherited role's.
    pub redacted: BTreeSet<usize>,
    /// The scalar computed fields it may read, by name.
    pub computed: BTreeSet<String>,
}

/// Which of a table's query (or subscription) root fields exist for a role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootFieldSet {
    /// `t`.
    pub list: bool,
    /// `t_by_pk`.
    pub by_pk: bool,
    /// `t_aggregate`.
    pub aggregate: bool,
    /// `t_stream` (subscriptions only).
    pub stream: bool,
}

impl Default for RootFieldSet {
    fn default() -> Self {
        RootFieldSet {
            list: true,
            by_pk: true,
            aggregate: true,
            stream: true,
        }
    }
}
