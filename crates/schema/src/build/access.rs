//! What a role may do with each table (from the config's permissions), and the
//! fields of each table that remain for it.

use super::{config_entry, qualified, SchemaError};
use crate::config::{Columns, Config};
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::*;
use grafton_catalog::{Catalog, TableKind, Writes};
use std::collections::BTreeSet;

/// What `role` may do with each table, from the config's `permissions`.
pub(super) fn table_access(
    catalog: &Catalog,
    config: &Config,
    tables: &[TableInfo],
    default_schema: &str,
    role: Option<&str>,
    backend_only: bool,
) -> Result<Vec<TableAccess>, SchemaError> {
    let mut out = Vec::with_capacity(tables.len());
    for info in tables {
        let t = &catalog.tables[info.catalog_index];
        let all: BTreeSet<usize> = (0..t.columns.len()).collect();
        // A view is written through its key (configured with `primary_key`): without
        // one, its written rows could not be found again, so it takes no writes.
        let writes = match t.kind {
            TableKind::Table => t.writes,
            TableKind::View if info.primary_key.is_empty() => Writes::default(),
            TableKind::View => t.writes,
        };
        let Some(role) = role else {
            out.push(TableAccess {
                select: Some(SelectAccess {
                    columns: all.clone(),
                    aggregations: true,
                    root_fields: RootFieldSet::default(),
                    subscription_fields: RootFieldSet::default(),
                    redacted: BTreeSet::new(),
                    computed: (info.fields.iter())
                        .filter(|(_, f)| matches!(f, TableField::Computed(_)))
                        .map(|(name, _)| name.clone())
                        .collect(),
                }),
                insert: writes.insert.then(|| all.clone()),
                update: writes.update.then(|| all.clone()),
                delete: writes.delete,
            });
            continue;
        };
        let entry = config_entry(catalog, config, info.catalog_index, default_schema)
            .and_then(|(k, tc)| tc.permissions.get(role).map(|p| (k, p)));
        let Some((key, perms)) = entry else {
            out.push(TableAccess::default());
            continue;
        };
        // A permission that cannot be served as written is left out whole.
        let refuse = |what: &str, why: String| {
            let kind = ObjectKind::permission(what).unwrap_or(ObjectKind::SelectPermission);
            SchemaError::Inconsistent(vec![Inconsistency::of_table(kind, key, role, why)])
        };
        let columns = |cols: &Columns, what: &str| -> Result<BTreeSet<usize>, SchemaError> {
            match cols {
                Columns::All(star) if star == "*" => Ok(all.clone()),
                Columns::All(other) => Err(refuse(
                    what,
                    format!("columns must be a list or \"*\", not '{other}'"),
                )),
                Columns::Some(names) => names
                    .iter()
                    .map(|n| {
                        (t.columns.iter().position(|c| &c.name == n)).ok_or_else(|| {
                            refuse(what, format!("{} has no column '{n}'", qualified(t)))
                        })
                    })
                    .collect(),
            }
        };
        let without =
            |mut cols: BTreeSet<usize>,
             presets: &std::collections::BTreeMap<String, serde_json::Value>| {
                cols.retain(|&c| !presets.contains_key(&t.columns[c].name));
                cols
            };
        let invalid = |e: String| refuse("select", e);
        out.push(TableAccess {
            select: match &perms.select {
                Some(p) => Some(SelectAccess {
                    columns: columns(&p.columns, "select")?,
                    aggregations: p.allow_aggregations,
                    root_fields: root_fields(p.query_root_fields.as_deref(), "query", false)
                        .map_err(invalid)?,
                    subscription_fields: root_fields(
                        p.subscription_root_fields.as_deref(),
                        "subscription",
                        true,
                    )
                    .map_err(invalid)?,
                    redacted: columns(
                        &Columns::Some(p.redact.keys().cloned().collect()),
                        "select",
                    )?,
                    computed: p.computed_fields.iter().cloned().collect(),
                }),
                None => None,
            },
            insert: match &perms.insert {
                Some(p) if writes.insert && (backend_only || !p.backend_only) => {
                    Some(without(columns(&p.columns, "insert")?, &p.set))
                }
                _ => None,
            },
            update: match &perms.update {
                Some(p) if writes.update && (backend_only || !p.backend_only) => {
                    Some(without(columns(&p.columns, "update")?, &p.set))
                }
                _ => None,
            },
            delete: writes.delete
                && perms
                    .delete
                    .as_ref()
                    .is_some_and(|p| backend_only || !p.backend_only),
        });
    }
    Ok(out)
}

/// Drops from each table's fields what the role cannot read: columns outside its
/// select columns, relationships to tables it cannot read, aggregates it may not use.
/// Returns which tables are *readable*: selectable with at least one field left (an
/// object type needs one). A role may select a table with no columns at all
/// (`columns: []`, to count it through `_aggregate`); such a table, and one the role
/// cannot select but may write, keeps no fields and has no object type.
pub(super) fn restrict(
    tables: &mut [TableInfo],
    relationships: &[Relationship],
    computed: &[ComputedField],
    access: &[TableAccess],
) -> Vec<bool> {
    let aggregable = |r: usize| {
        access[relationships[r].target]
            .select
            .as_ref()
            .is_some_and(|s| s.aggregations)
    };
    let keeps = |select: &SelectAccess, f: TableField, readable: &[bool]| match f {
        TableField::Column(c) => select.columns.contains(&c),
        TableField::Object(r) | TableField::Array(r) | TableField::ArrayConnection(r) => {
            readable[relationships[r].target]
        }
        TableField::ArrayAggregate(r) => aggregable(r),
        TableField::ComputedAggregate(c) => match computed[c].returns {
            ComputedReturns::Rows(t) => {
                readable[t] && access[t].select.as_ref().is_some_and(|s| s.aggregations)
            }
            ComputedReturns::Scalar(_) => false,
        },
        TableField::Computed(c) => match computed[c].returns {
            ComputedReturns::Scalar(_) => select.computed.contains(&computed[c].name),
            ComputedReturns::Rows(t) => readable[t],
        },
        // Added after this (see `remote_relationships::resolve`).
        TableField::Remote(_) => false,
    };
    // Readability depends on the targets' (a table whose only fields are
    // relationships to unreadable tables is unreadable too): iterate to a fixpoint.
    let mut readable: Vec<bool> = access.iter().map(|a| a.select.is_some()).collect();
    loop {
        let mut changed = false;
        for (id, info) in tables.iter().enumerate() {
            let Some(select) = access[id].select.as_ref().filter(|_| readable[id]) else {
                continue;
            };
            let any = (info.fields.values()).any(|f| keeps(select, *f, &readable));
            if !any {
                readable[id] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (id, info) in tables.iter_mut().enumerate() {
        let a = &access[id];
        info.mutable = a.insert.is_some() || a.update.is_some() || a.delete;
        let Some(select) = a.select.as_ref().filter(|_| readable[id]) else {
            info.fields.clear();
            continue;
        };
        info.fields.retain(|_, f| keeps(select, *f, &readable));
    }
    readable
}

/// Hasura's `query_root_fields` / `subscription_root_fields` (`None`: all).
fn root_fields(
    names: Option<&[String]>,
    kind: &str,
    subscription: bool,
) -> Result<RootFieldSet, String> {
    let Some(names) = names else {
        return Ok(RootFieldSet::default());
    };
    let mut set = RootFieldSet {
        list: false,
        by_pk: false,
        aggregate: false,
        stream: false,
    };
    for name in names {
        match name.as_str() {
            "select" => set.list = true,
            "select_by_pk" => set.by_pk = true,
            "select_aggregate" => set.aggregate = true,
            "select_stream" if subscription => set.stream = true,
            other => return Err(format!("unknown {kind}_root_fields value '{other}'")),
        }
    }
    Ok(set)
}

/// `catalog` with the columns a role sees only on some rows made nullable (the
/// schema's types follow the catalog's nullability).
pub(super) fn redacted_nullable(
    mut catalog: Catalog,
    tables: &[TableInfo],
    access: &[TableAccess],
) -> Catalog {
    for (info, a) in tables.iter().zip(access) {
        for &c in a.select.iter().flat_map(|s| &s.redacted) {
            catalog.tables[info.catalog_index].columns[c].nullable = true;
        }
    }
    catalog
}
