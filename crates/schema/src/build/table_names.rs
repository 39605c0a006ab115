//! Naming the catalog's tables and their columns: from the database's names under
//! the naming convention, or from custom names (config, Hasura metadata), which
//! must be GraphQL names and must not collide.

use super::*;
use crate::config::{CustomRootField, TableConfig};
use crate::inconsistent::{Inconsistency, ObjectKind};

/// The catalog's tables that are served: all of them, or without auto-tracking
/// (Hasura metadata) only those the config lists, as Hasura serves only what its
/// metadata tracks.
pub(super) fn tracked(mut catalog: Catalog, config: &Config, default_schema: &str) -> Catalog {
    let listed: HashSet<usize> = (config.tables.keys())
        .filter_map(|k| find_table(&catalog, k, default_schema))
        .collect();
    if config.auto_track.unwrap_or(true) {
        // An extension's own tables (PostGIS's `spatial_ref_sys`) are its
        // business, not the API's, unless the config names them.
        let extension = std::mem::take(&mut catalog.extension_tables);
        let mut index = 0;
        catalog.tables.retain(|t| {
            index += 1;
            listed.contains(&(index - 1))
                || !extension.contains(&(t.schema.clone(), t.name.clone()))
        });
        return catalog;
    }
    let mut index = 0;
    catalog.tables.retain(|_| {
        index += 1;
        listed.contains(&(index - 1))
    });
    catalog
}

pub(super) fn name_tables(
    catalog: &Catalog,
    config: &Config,
    naming: Naming,
    default_schema: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<TableInfo>, SchemaError> {
    let missing: Vec<Inconsistency> = (config.tables.keys())
        .filter(|key| find_table(catalog, key, default_schema).is_none())
        .map(|key| {
            let why = format!("no table or view '{key}' in the database (exposed schemas)");
            Inconsistency::new(ObjectKind::Table, key, why)
        })
        .collect();
    if !missing.is_empty() {
        return Err(SchemaError::Inconsistent(missing));
    }
    let table_config = |ci: usize| config_entry(catalog, config, ci, default_schema).map(|e| e.1);
    // A table the config names that cannot be served as written is left out whole.
    let invalid = |ci: usize, why: String| match config_entry(catalog, config, ci, default_schema) {
        Some((key, _)) => {
            SchemaError::Inconsistent(vec![Inconsistency::new(ObjectKind::Table, key, why)])
        }
        None => SchemaError::Config(why),
    };
    // Each table's base name (its custom name, else its own, schema-qualified outside
    // the default schema) and root field names. Tables with custom names claim theirs
    // first; any collision involving a custom name is a configuration error naming
    // both, while tables named by the database that collide with each other or with
    // a shared type are skipped, as before.
    let mut plans = Vec::with_capacity(catalog.tables.len());
    for (ci, t) in catalog.tables.iter().enumerate() {
        let tc = table_config(ci);
        let custom = tc.and_then(|tc| tc.custom_name.as_deref());
        let base = match custom {
            Some(name) => {
                valid_name(name).map_err(|why| {
                    invalid(ci, format!("{}: custom_name '{name}' {why}", qualified(t)))
                })?;
                name.to_owned()
            }
            None if t.schema == default_schema => graphql_safe(&t.name),
            None => graphql_safe(&format!("{}_{}", t.schema, t.name)),
        };
        let (roots, custom_roots) =
            root_names(naming, &base, tc, t, &config.root_fields).map_err(|e| invalid(ci, e))?;
        plans.push((base, custom.is_some(), roots, custom_roots));
    }
    let owner = |ci: usize| match &plans[ci] {
        (base, true, ..) => format!(
            "table {} (custom_name '{base}')",
            qualified(&catalog.tables[ci])
        ),
        (.., true) => format!(
            "table {} (custom_root_fields)",
            qualified(&catalog.tables[ci])
        ),
        _ => format!("table {}", qualified(&catalog.tables[ci])),
    };
    let mut taken = names::Taken::reserved(naming, catalog, default_schema);
    let mut kept = vec![false; catalog.tables.len()];
    for first in [true, false] {
        for (ci, (base, custom_base, roots, custom_roots)) in plans.iter().enumerate() {
            if (*custom_base || *custom_roots) != first {
                continue;
            }
            // Root fields made from a custom base are custom too.
            let claimed: Vec<(String, bool)> = (roots.names.iter().zip(RootKind::ALL))
                .map(|(name, kind)| {
                    let custom = *custom_base || is_custom_root(table_config(ci), kind);
                    (name.clone(), custom)
                })
                .collect();
            match taken.claim(naming, base, *custom_base, &claimed, &owner(ci)) {
                Ok(()) => kept[ci] = true,
                Err(clash) if clash.custom => {
                    return Err(invalid(
                        ci,
                        format!(
                            "{} needs the GraphQL name '{}', which {} already takes",
                            owner(ci),
                            clash.name,
                            clash.by
                        ),
                    ))
                }
                Err(clash) => warnings.push(format!(
                    "table {} skipped: the GraphQL name '{}' it needs is taken by {}",
                    qualified(&catalog.tables[ci]),
                    clash.name,
                    clash.by
                )),
            }
        }
    }
    let mut tables = Vec::new();
    for (ci, t) in catalog.tables.iter().enumerate() {
        if !kept[ci] {
            continue;
        }
        let (base, _, roots, _) = plans[ci].clone();
        let table_config = table_config(ci);
        let pk_names = match table_config {
            Some(tc) if !tc.primary_key.is_empty() => tc.primary_key.clone(),
            _ => t.primary_key.clone(),
        };
        let mut primary_key = Vec::new();
        for name in &pk_names {
            let idx = t
                .columns
                .iter()
                .position(|c| &c.name == name)
                .ok_or_else(|| {
                    invalid(
                        ci,
                        format!("primary key column '{name}' is not in {}", qualified(t)),
                    )
                })?;
            primary_key.push(idx);
        }
        let mut fields = HashMap::new();
        let mut column_fields = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            let custom = (table_config.and_then(|tc| tc.columns.get(&c.name)))
                .and_then(|cc| cc.custom_name.as_deref());
            let name = match custom {
                Some(name) => {
                    valid_name(name).map_err(|why| {
                        let why = format!(
                            "column {}.{}: custom_name '{name}' {why}",
                            qualified(t),
                            c.name
                        );
                        invalid(ci, why)
                    })?;
                    name.to_owned()
                }
                None => naming.field(&graphql_safe(&c.name)),
            };
            if let Some(TableField::Column(j)) = fields.insert(name.clone(), TableField::Column(i))
            {
                let other = &t.columns[j].name;
                let named = |col: &str| {
                    (table_config.and_then(|tc| tc.columns.get(col)))
                        .is_some_and(|cc| cc.custom_name.is_some())
                };
                if named(&c.name) || named(other) {
                    return Err(invalid(
                        ci,
                        format!(
                            "columns {0}.{other} and {0}.{1} would both be the GraphQL field '{name}'",
                            qualified(t),
                            c.name
                        ),
                    ));
                }
                warnings.push(format!(
                    "column {}.{} hides another column with the GraphQL name '{name}'",
                    qualified(t),
                    c.name
                ));
            }
            column_fields.push(name);
        }
        let position = |name: &String| t.columns.iter().position(|c| &c.name == name);
        let mut constraints = HashMap::new();
        if !t.primary_key.is_empty() {
            let name = t
                .primary_key_name
                .clone()
                .unwrap_or_else(|| format!("{}_pkey", t.name));
            let cols: Option<Vec<usize>> = t.primary_key.iter().map(position).collect();
            if let Some(cols) = cols {
                constraints.insert(naming.enum_value(&graphql_safe(&name)), cols);
            }
        }
        for u in &t.unique_constraints {
            let cols: Option<Vec<usize>> = u.columns.iter().map(position).collect();
            if let Some(cols) = cols {
                constraints.insert(naming.enum_value(&graphql_safe(&u.name)), cols);
            }
        }
        tables.push(TableInfo {
            catalog_index: ci,
            type_name: naming.type_name(&base),
            base_name: base,
            primary_key,
            column_fields,
            fields,
            mutable: t.writes.any(),
            constraints,
            roots,
        });
    }
    Ok(tables)
}

/// `catalog` with the config's descriptions of tables and columns in place of the
/// database's comments (SQLite has none; Hasura's metadata may override them).
pub(super) fn with_comments(
    mut catalog: Catalog,
    config: &Config,
    default_schema: &str,
) -> Catalog {
    for (key, tc) in &config.tables {
        let Some(ti) = find_table(&catalog, key, default_schema) else {
            continue;
        };
        let table = &mut catalog.tables[ti];
        if tc.comment.is_some() {
            table.comment.clone_from(&tc.comment);
        }
        for column in &mut table.columns {
            if let Some(comment) = tc
                .columns
                .get(&column.name)
                .and_then(|c| c.comment.as_ref())
            {
                column.comment = Some(comment.clone());
            }
        }
    }
    catalog
}

/// The names of a table's root fields (and custom descriptions), from `base` under
/// the naming convention or from the config's `custom_root_fields` (used as
/// written); and whether any is custom.
fn root_names(
    naming: Naming,
    base: &str,
    tc: Option<&TableConfig>,
    t: &Table,
    affixes: &crate::config::RootFieldAffixes,
) -> Result<(RootNames, bool), String> {
    let custom = tc.map(|tc| &tc.custom_root_fields);
    if let Some(key) = custom
        .into_iter()
        .flat_map(|c| c.keys())
        .find(|k| RootKind::from_key(k).is_none())
    {
        let keys: Vec<&str> = RootKind::ALL.iter().map(|k| k.key()).collect();
        return Err(format!(
            "{}: custom_root_fields.{key} is not a root field (one of {})",
            qualified(t),
            keys.join(", ")
        ));
    }
    let mut roots = RootNames::default();
    let mut any = false;
    for kind in RootKind::ALL {
        let given = custom
            .and_then(|c| c.get(kind.key()))
            .and_then(Option::as_ref);
        let (name, comment) = match given {
            Some(CustomRootField::Name(n)) => (Some(n.clone()), None),
            Some(CustomRootField::Full { name, comment }) => (name.clone(), comment.clone()),
            None => (None, None),
        };
        let name = match name {
            Some(n) => {
                valid_name(&n).map_err(|why| {
                    format!(
                        "{}: custom_root_fields.{} '{n}' {why}",
                        qualified(t),
                        kind.key()
                    )
                })?;
                any = true;
                n
            }
            None => naming.field(&kind.form().replace("{}", base)),
        };
        // The source's prefix and suffix go around every root field, custom or not.
        let camel = naming.convention == crate::naming::Convention::GraphqlDefault;
        roots.names.push(affixes.apply(&name, camel));
        roots.comments.push(comment);
    }
    Ok((roots, any))
}

/// Whether the config names root field `kind` of the table itself.
fn is_custom_root(tc: Option<&TableConfig>, kind: RootKind) -> bool {
    let given = tc.and_then(|tc| tc.custom_root_fields.get(kind.key()));
    matches!(
        given,
        Some(Some(CustomRootField::Name(_)))
            | Some(Some(CustomRootField::Full { name: Some(_), .. }))
    )
}

/// Why `name` cannot be a GraphQL name given as is (a custom name), if it cannot.
fn valid_name(name: &str) -> Result<(), &'static str> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c == '_' || c.is_ascii_alphanumeric()) {
        return Err("is not a GraphQL name (letters, digits and _, not starting with a digit)");
    }
    if name.starts_with("__") {
        return Err("starts with __, which GraphQL keeps for introspection");
    }
    Ok(())
}
