//! The relationships between the catalog's tables: from foreign keys (both
//! directions) and from the config's manual ones.

use super::*;
use crate::inconsistent::{Inconsistency, ObjectKind};

/// A relationship before its final name is settled.
struct Draft {
    snake: String,
    kind: RelKind,
    source: TableId,
    target: TableId,
    mapping: Vec<(usize, usize)>,
    /// Suffix that disambiguates a clash (`_by_<columns>`).
    disambiguator: String,
    /// See [`Relationship::after_parent`].
    after_parent: bool,
    /// See [`Relationship::enforced`].
    enforced: bool,
    /// Named by the config or Hasura's metadata: clients ask for it by that name, so a
    /// clash with a column stops start-up instead of renaming it.
    named: bool,
}

/// The relationships of the exposed tables. A config key without a schema names a
/// table of `default_schema` (`public`, or SQLite's `main`), whichever schemas are
/// exposed, as Hasura reads it.
pub(super) fn relationships(
    catalog: &Catalog,
    config: &Config,
    tables: &mut [TableInfo],
    naming: Naming,
    default_schema: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Relationship>, SchemaError> {
    let by_catalog: HashMap<usize, TableId> = tables
        .iter()
        .enumerate()
        .map(|(id, t)| (t.catalog_index, id))
        .collect();
    let mut drafts = Vec::new();
    // Relationships the config names that cannot be served, each left out whole.
    let mut problems = Vec::new();
    for (source, info) in tables.iter().enumerate() {
        let table = &catalog.tables[info.catalog_index];
        for fk in &table.foreign_keys {
            let Some(ref_ci) = catalog.table_index(&fk.ref_schema, &fk.ref_table) else {
                continue;
            };
            let Some(&target) = by_catalog.get(&ref_ci) else {
                continue;
            };
            let ref_table = &catalog.tables[ref_ci];
            let mut mapping = Vec::new();
            for (col, ref_col) in fk.columns.iter().zip(&fk.ref_columns) {
                let (Some(a), Some(b)) = (
                    table.columns.iter().position(|c| &c.name == col),
                    ref_table.columns.iter().position(|c| &c.name == ref_col),
                ) else {
                    continue;
                };
                mapping.push((a, b));
            }
            if mapping.len() != fk.columns.len() {
                continue;
            }
            let cols = graphql_safe(&fk.columns.join("_"));
            let object_name = match fk.columns.as_slice() {
                [one] => match one.strip_suffix("_id") {
                    Some(stem) if !stem.is_empty() && table.column(stem).is_none() => {
                        graphql_safe(stem)
                    }
                    _ => format!("{cols}_{}", tables[target].base_name),
                },
                _ => format!("{cols}_{}", tables[target].base_name),
            };
            drafts.push(Draft {
                snake: object_name,
                kind: RelKind::Object,
                source,
                target,
                mapping: mapping.clone(),
                disambiguator: format!("_by_{cols}"),
                after_parent: false,
                enforced: fk.enforced,
                named: false,
            });
            let fks_to_same = table
                .foreign_keys
                .iter()
                .filter(|f| f.ref_schema == fk.ref_schema && f.ref_table == fk.ref_table)
                .count();
            let mut array_name = plural(&tables[source].base_name);
            if fks_to_same > 1 {
                array_name = format!("{array_name}_by_{cols}");
            }
            drafts.push(Draft {
                snake: array_name,
                kind: RelKind::Array,
                source: target,
                target: source,
                mapping: mapping.iter().map(|(a, b)| (*b, *a)).collect(),
                disambiguator: format!("_by_{cols}"),
                after_parent: false,
                enforced: false,
                named: false,
            });
        }
    }
    // Manual relationships from the config.
    for (key, tc) in &config.tables {
        let Some(ci) = find_table(catalog, key, default_schema) else {
            continue;
        };
        let Some(&source) = by_catalog.get(&ci) else {
            continue;
        };
        for (name, manual) in &tc.relationships {
            let kind = match manual.kind {
                ManualKind::Object => ObjectKind::ObjectRelation,
                ManualKind::Array => ObjectKind::ArrayRelation,
            };
            let mut refuse = |why: String| {
                problems.push(Inconsistency::of_table(kind, key, name, why));
            };
            let target_ci = find_table(catalog, &manual.table, default_schema);
            let Some(&target) = target_ci.and_then(|ci| by_catalog.get(&ci)) else {
                refuse(format!("table '{}' is not tracked", manual.table));
                continue;
            };
            let target_ci = tables[target].catalog_index;
            let mut mapping = Vec::new();
            for (from, to) in &manual.columns {
                let a = catalog.tables[ci]
                    .columns
                    .iter()
                    .position(|c| &c.name == from);
                let b = catalog.tables[target_ci]
                    .columns
                    .iter()
                    .position(|c| &c.name == to);
                if let (Some(a), Some(b)) = (a, b) {
                    mapping.push((a, b));
                } else {
                    refuse(format!("unknown column in mapping {from} → {to}"));
                    break;
                }
            }
            if mapping.len() != manual.columns.len() {
                continue;
            }
            if mapping.is_empty() {
                refuse("its column mapping maps no column".to_owned());
                continue;
            }
            drafts.push(Draft {
                snake: graphql_safe(name),
                kind: match manual.kind {
                    ManualKind::Object => RelKind::Object,
                    ManualKind::Array => RelKind::Array,
                },
                source,
                target,
                mapping,
                disambiguator: "_manual".to_owned(),
                after_parent: manual.kind == ManualKind::Object
                    && manual.insertion_order == InsertionOrder::AfterParent,
                enforced: false,
                named: true,
            });
        }
        for (name, fk) in &tc.foreign_key_relationships {
            let kind = match fk.kind {
                ManualKind::Object => RelKind::Object,
                ManualKind::Array => RelKind::Array,
            };
            // An object relationship through the remote table's key (a one-to-one,
            // Hasura's `foreign_key_constraint_on: {table, column}`) is found as that
            // key's array side and added as an object relationship.
            let remote_object = kind == RelKind::Object && fk.table.is_some();
            let kind = if remote_object { RelKind::Array } else { kind };
            let holder = match (&fk.table, kind) {
                (Some(t), RelKind::Array) => find_table(catalog, t, default_schema)
                    .and_then(|ci| by_catalog.get(&ci).copied()),
                (None, RelKind::Object) => Some(source),
                _ => None,
            };
            let key_columns = |d: &Draft| -> Vec<&str> {
                let (table, cols): (TableId, Vec<usize>) = match d.kind {
                    RelKind::Object => (d.source, d.mapping.iter().map(|m| m.0).collect()),
                    RelKind::Array => (d.target, d.mapping.iter().map(|m| m.1).collect()),
                };
                let t = &catalog.tables[tables[table].catalog_index];
                cols.iter().map(|&c| t.columns[c].name.as_str()).collect()
            };
            let found = drafts.iter().position(|d| {
                d.source == source
                    && d.kind == kind
                    && d.disambiguator != "_manual"
                    && holder
                        == Some(if kind == RelKind::Object {
                            d.source
                        } else {
                            d.target
                        })
                    && key_columns(d) == fk.columns.iter().map(String::as_str).collect::<Vec<_>>()
            });
            let Some(i) = found else {
                let why = match (&fk.table, holder) {
                    (Some(t), None) => format!("table '{t}' is not tracked"),
                    _ => no_foreign_key(catalog, tables, source, fk, default_schema),
                };
                let kind = match fk.kind {
                    ManualKind::Object => ObjectKind::ObjectRelation,
                    ManualKind::Array => ObjectKind::ArrayRelation,
                };
                problems.push(Inconsistency::of_table(kind, key, name, why));
                continue;
            };
            if remote_object {
                let d = &drafts[i];
                let object = Draft {
                    snake: graphql_safe(name),
                    kind: RelKind::Object,
                    source,
                    target: d.target,
                    mapping: d.mapping.clone(),
                    disambiguator: "_manual".to_owned(),
                    after_parent: true,
                    enforced: false,
                    named: true,
                };
                drafts.push(object);
            } else {
                drafts[i].snake = graphql_safe(name);
                drafts[i].named = true;
            }
        }
        for (from, to) in &tc.rename_relationships {
            let Some(d) = drafts
                .iter_mut()
                .find(|d| d.source == source && &d.snake == from)
            else {
                let why = format!("rename_relationships: no relationship named '{from}'");
                problems.push(Inconsistency::of_table(
                    ObjectKind::ObjectRelation,
                    key,
                    to,
                    why,
                ));
                continue;
            };
            d.snake = graphql_safe(to);
            d.named = true;
        }
    }
    // Without auto-tracking (Hasura metadata), a foreign key is a relationship only
    // where the config names it.
    let auto_track = config.auto_track.unwrap_or(true);
    // Settle names: a clash with a column or an earlier relationship gets a suffix.
    let mut out = Vec::new();
    for d in drafts.into_iter().filter(|d| d.named || auto_track) {
        let fields = &mut tables[d.source].fields;
        let mut snake = d.snake.clone();
        let taken = |fields: &HashMap<String, TableField>, s: &str| {
            fields.contains_key(&naming.field(s))
                || fields.contains_key(&naming.field(&format!("{s}_aggregate")))
        };
        // A column or computed field, under the name or its `_aggregate`.
        let column = |s: &str| {
            [naming.field(s), naming.field(&format!("{s}_aggregate"))]
                .into_iter()
                .find(|n| {
                    matches!(
                        fields.get(n),
                        Some(TableField::Column(_) | TableField::Computed(_))
                    )
                })
        };
        if let Some(column) = column(&snake).filter(|_| d.named) {
            let kind = match d.kind {
                RelKind::Object => ObjectKind::ObjectRelation,
                RelKind::Array => ObjectKind::ArrayRelation,
            };
            let why = format!(
                "the table has a column or computed field named '{column}' too \
                 (a custom column name?); rename one of them"
            );
            let key = config_key(catalog, config, tables, d.source, default_schema);
            problems.push(Inconsistency::of_table(kind, &key, &d.snake, why));
            continue;
        }
        if taken(fields, &snake) {
            snake = format!("{}{}", d.snake, d.disambiguator);
            let mut n = 2;
            while taken(fields, &snake) {
                snake = format!("{}{}_{n}", d.snake, d.disambiguator);
                n += 1;
            }
            warnings.push(format!(
                "relationship '{}' on {} renamed to '{snake}' to avoid a clash",
                d.snake, tables[d.source].base_name
            ));
        }
        let id = out.len();
        let name = naming.field(&snake);
        match d.kind {
            RelKind::Object => {
                fields.insert(name.clone(), TableField::Object(id));
            }
            RelKind::Array => {
                fields.insert(name.clone(), TableField::Array(id));
                fields.insert(
                    naming.field(&format!("{snake}_aggregate")),
                    TableField::ArrayAggregate(id),
                );
            }
        }
        out.push(Relationship {
            name,
            kind: d.kind,
            source: d.source,
            target: d.target,
            mapping: d.mapping,
            after_parent: d.after_parent,
            enforced: d.enforced,
        });
    }
    if !problems.is_empty() {
        return Err(SchemaError::Inconsistent(problems));
    }
    Ok(out)
}

/// The config key of an exposed table (its `schema.name` when the config has none).
fn config_key(
    catalog: &Catalog,
    config: &Config,
    tables: &[TableInfo],
    table: TableId,
    default_schema: &str,
) -> String {
    let ci = tables[table].catalog_index;
    config_entry(catalog, config, ci, default_schema)
        .map_or_else(|| qualified(&catalog.tables[ci]), |(key, _)| key.clone())
}

/// Why a foreign-key relationship was not found: the key references an untracked
/// table, or there is no such key.
fn no_foreign_key(
    catalog: &Catalog,
    tables: &[TableInfo],
    source: TableId,
    fk: &crate::config::ForeignKeyRelationship,
    default_schema: &str,
) -> String {
    let holder = match &fk.table {
        Some(t) => find_table(catalog, t, default_schema),
        None => Some(tables[source].catalog_index),
    };
    let key = holder
        .and_then(|h| (catalog.tables[h].foreign_keys.iter()).find(|k| k.columns == fk.columns));
    match key {
        Some(k) => format!(
            "the foreign key on ({}) references {}.{}, which is not tracked",
            fk.columns.join(", "),
            k.ref_schema,
            k.ref_table
        ),
        None => format!(
            "no foreign key on ({}){}",
            fk.columns.join(", "),
            fk.table
                .as_deref()
                .map(|t| format!(" of '{t}'"))
                .unwrap_or_default()
        ),
    }
}
