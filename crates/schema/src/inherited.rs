//! Inherited roles (Hasura's `inherited_roles`): a role made of other roles, written
//! out as ordinary per-table permissions before any schema is built, so the schema,
//! the rules and the SQL treat it like any other role.
//!
//! Hasura's rules, per table and permission kind, an explicit permission of the
//! inherited role winning over what it would inherit:
//! - select: the rows any parent reads (the OR of their filters); the columns any
//!   parent reads, each shown only on the rows a parent granting it reads and NULL
//!   elsewhere (`redact`; such a column is nullable in the schema); the largest
//!   limit any parent sets; aggregations and root fields if any parent has them.
//! - insert, update, delete: the parents' permission when only one parent defines
//!   it or all define the same; none when they differ (a warning says so).
//! - tracked functions: callable if any parent may call them.
//!
//! Parents may be inherited roles themselves; cycles stop start-up.

use crate::build::{find_table, SchemaError};
use crate::config::{Columns, Config, Permissions, SelectPermission};
use grafton_catalog::Catalog;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet};

/// `config` with every inherited role's permissions written out, and warnings for
/// permissions not inherited because the parents' differ.
pub fn expand(
    config: &Config,
    catalog: &Catalog,
    default_schema: &str,
) -> Result<(Config, Vec<String>), SchemaError> {
    if config.inherited_roles.is_empty() {
        return Ok((config.clone(), Vec::new()));
    }
    let mut out = config.clone();
    let mut warnings = Vec::new();
    for role in order(&config.inherited_roles)? {
        let parents = &config.inherited_roles[&role];
        for (key, table) in out.tables.iter_mut() {
            let Some(ci) = find_table(catalog, key, default_schema) else {
                continue;
            };
            let all: Vec<&str> = catalog.tables[ci]
                .columns
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            let of_parents: Vec<&Permissions> = parents
                .iter()
                .filter_map(|p| table.permissions.get(p))
                .collect();
            let explicit = table.permissions.get(&role).cloned().unwrap_or_default();
            let mut conflict = |kind: &str| {
                warnings.push(format!(
                    "inherited role '{role}': its roles' {kind} permissions on '{key}' differ, \
                     so it has none (give it its own)"
                ))
            };
            let inherited = Permissions {
                select: explicit.select.or_else(|| select(&of_parents, &all)),
                insert: explicit.insert.or_else(|| {
                    same(of_parents.iter().filter_map(|p| p.insert.as_ref())).unwrap_or_else(|| {
                        conflict("insert");
                        None
                    })
                }),
                update: explicit.update.or_else(|| {
                    same(of_parents.iter().filter_map(|p| p.update.as_ref())).unwrap_or_else(|| {
                        conflict("update");
                        None
                    })
                }),
                delete: explicit.delete.or_else(|| {
                    same(of_parents.iter().filter_map(|p| p.delete.as_ref())).unwrap_or_else(|| {
                        conflict("delete");
                        None
                    })
                }),
            };
            let any = inherited.select.is_some()
                || inherited.insert.is_some()
                || inherited.update.is_some()
                || inherited.delete.is_some();
            if any {
                table.permissions.insert(role.clone(), inherited);
            }
        }
        // A function is callable if any parent may call it (Hasura's rule).
        for f in out.functions.values_mut() {
            let granted = f.permissions.iter().any(|p| parents.contains(&p.role));
            if granted && !f.permissions.iter().any(|p| p.role == role) {
                f.permissions
                    .push(crate::config::FunctionPermission { role: role.clone() });
            }
        }
    }
    Ok((out, warnings))
}

/// The inherited roles, each after the inherited roles it is made of.
fn order(roles: &BTreeMap<String, Vec<String>>) -> Result<Vec<String>, SchemaError> {
    fn visit(
        role: &str,
        roles: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Result<(), SchemaError> {
        if done.iter().any(|d| d == role) {
            return Ok(());
        }
        if let Some(at) = path.iter().position(|p| p == role) {
            let cycle = [&path[at..], &[role.to_owned()]].concat().join(" -> ");
            return Err(SchemaError::Config(format!(
                "inherited_roles: a cycle: {cycle}"
            )));
        }
        let Some(parents) = roles.get(role) else {
            return Ok(());
        };
        if parents.is_empty() {
            return Err(SchemaError::Config(format!(
                "inherited_roles: '{role}' inherits from no role"
            )));
        }
        path.push(role.to_owned());
        for p in parents {
            visit(p, roles, path, done)?;
        }
        path.pop();
        done.push(role.to_owned());
        Ok(())
    }
    let mut done = Vec::new();
    for role in roles.keys() {
        visit(role, roles, &mut Vec::new(), &mut done)?;
    }
    Ok(done)
}

/// `Some(permission)` when the parents that define one agree (or none does: `None`);
/// `None` when they differ.
fn same<'a, T: PartialEq + Clone + 'a>(
    mut defined: impl Iterator<Item = &'a T>,
) -> Option<Option<T>> {
    let Some(first) = defined.next() else {
        return Some(None);
    };
    defined.all(|p| p == first).then(|| Some(first.clone()))
}

/// A filter as JSON, or `None` for every row.
fn condition(filter: &Option<Json>) -> Option<&Json> {
    filter
        .as_ref()
        .filter(|f| !matches!(f, Json::Null) && f.as_object().is_none_or(|m| !m.is_empty()))
}

/// `{"_or": [...]}` of the conditions, `None` (every row) when any is.
fn any_of(conditions: Vec<Option<&Json>>) -> Option<Json> {
    let mut list = Vec::with_capacity(conditions.len());
    for c in conditions {
        list.push(c?.clone());
    }
    Some(match list.len() {
        1 => list.pop().unwrap_or(Json::Null),
        _ => json!({ "_or": list }),
    })
}

/// The select permission of a role made of `parents` (their own, already written out).
fn select(parents: &[&Permissions], all: &[&str]) -> Option<SelectPermission> {
    let parents: Vec<&SelectPermission> =
        parents.iter().filter_map(|p| p.select.as_ref()).collect();
    if parents.is_empty() {
        return None;
    }
    let granted = |p: &SelectPermission| -> BTreeSet<String> {
        match &p.columns {
            Columns::All(_) => all.iter().map(|c| (*c).to_owned()).collect(),
            Columns::Some(names) => names.iter().cloned().collect(),
        }
    };
    let grants: Vec<BTreeSet<String>> = parents.iter().map(|p| granted(p)).collect();
    let columns: BTreeSet<String> = grants.iter().flatten().cloned().collect();
    let filter = any_of(parents.iter().map(|p| condition(&p.filter)).collect());
    let mut redact = BTreeMap::new();
    for column in &columns {
        let granting: Vec<usize> = (0..parents.len())
            .filter(|&i| grants[i].contains(column))
            .collect();
        // A parent's rows, or where it shows this column if it redacts it itself.
        let shown = |i: usize| match parents[i].redact.get(column) {
            Some(c) => Some(c),
            None => condition(&parents[i].filter),
        };
        let plain = granting.len() == parents.len()
            && granting
                .iter()
                .all(|&i| !parents[i].redact.contains_key(column));
        if plain {
            continue; // shown on every row the role reads
        }
        if let Some(when) = any_of(granting.iter().map(|&i| shown(i)).collect()) {
            redact.insert(column.clone(), when);
        }
    }
    let roots = |lists: Vec<&Option<Vec<String>>>| -> Option<Vec<String>> {
        let mut union = BTreeSet::new();
        for l in lists {
            union.extend(l.as_ref()?.iter().cloned());
        }
        Some(union.into_iter().collect())
    };
    Some(SelectPermission {
        columns: Columns::Some(columns.into_iter().collect()),
        filter,
        // Hasura's `Maybe (Max Int)`: a parent without a limit does not lift the others'.
        limit: parents.iter().filter_map(|p| p.limit).max(),
        allow_aggregations: parents.iter().any(|p| p.allow_aggregations),
        query_root_fields: roots(parents.iter().map(|p| &p.query_root_fields).collect()),
        subscription_root_fields: roots(
            parents
                .iter()
                .map(|p| &p.subscription_root_fields)
                .collect(),
        ),
        // Only those every parent reads: shown on every row the role reads.
        computed_fields: (parents[0].computed_fields.iter())
            .filter(|c| parents.iter().all(|p| p.computed_fields.contains(c)))
            .cloned()
            .collect(),
        redact,
    })
}
