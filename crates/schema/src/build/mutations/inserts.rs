//! What a role may insert through: the relationships it follows to tables it may
//! insert into, and inserts that leave nothing to write (left out, and said).

use crate::build::Builder;
use crate::model::{Relationship, TableField, TableId};
use std::collections::BTreeSet;

impl Builder<'_> {
    /// The relationships of `id` the role may insert through.
    pub(in crate::build) fn insert_relationships(
        &self,
        id: TableId,
    ) -> impl Iterator<Item = &Relationship> {
        insert_relationships(self.tables, self.relationships, self.access, id)
    }
}

/// The relationships of `id` a role may insert through: followed from `id` (the
/// role sees them) to a table it may insert into.
pub(in crate::build) fn insert_relationships<'a>(
    tables: &'a [crate::model::TableInfo],
    relationships: &'a [Relationship],
    access: &'a [crate::model::TableAccess],
    id: TableId,
) -> impl Iterator<Item = &'a Relationship> {
    let info = &tables[id];
    (relationships.iter().enumerate())
        .filter(move |(rid, r)| {
            let followed = matches!(
                info.fields.get(&r.name),
                Some(TableField::Object(x) | TableField::Array(x)) if x == rid
            );
            r.source == id && followed && access[r.target].insert.is_some()
        })
        .map(|(_, r)| r)
}

/// A role's inserts that leave no field to write (every column a preset or not
/// granted, and no relationship to insert through) are left out whole and said:
/// GraphQL has no empty input type. Until nothing changes, since leaving one out
/// can leave a table that inserted only through it with nothing either.
pub(in crate::build) fn without_empty_inserts(
    mut access: Vec<crate::model::TableAccess>,
    tables: &[crate::model::TableInfo],
    relationships: &[Relationship],
    catalog: &grafton_catalog::Catalog,
    role: Option<&str>,
) -> Vec<crate::model::TableAccess> {
    loop {
        let empty = (0..access.len()).find(|&id| {
            access[id].insert.as_ref().is_some_and(BTreeSet::is_empty)
                && insert_relationships(tables, relationships, &access, id)
                    .next()
                    .is_none()
        });
        let Some(id) = empty else {
            return access;
        };
        let table = &catalog.tables[tables[id].catalog_index].name;
        tracing::warn!(
            "role '{}': its insert permission on {table} leaves no column to write (each \
             is a preset or not granted) and no relationship to insert through, so it is \
             not served (grant a column to serve it)",
            role.unwrap_or("admin")
        );
        access[id].insert = None;
    }
}
