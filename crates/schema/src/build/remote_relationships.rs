//! Relationships from tables to remote schemas' fields in a role's schema: a
//! field of the table's type, of the remote field's type, with the remote
//! field's arguments the relationship does not fill. A role sees one when it
//! sees the remote field (its remote permission) and may read every column
//! the arguments take.

use super::*;
use crate::config::RemoteRelationshipConfig;
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::{RemoteRel, RemoteStep, ServedRemote};
use apollo_compiler::schema::ExtendedType;

/// The remote relationships `role` sees, each added to its table's fields;
/// or those that cannot be served for anyone.
pub(crate) fn resolve(
    catalog: &Catalog,
    config: &Config,
    tables: &mut [TableInfo],
    readable: &[bool],
    remotes: &[ServedRemote],
    role: Option<&str>,
    default_schema: &str,
) -> Result<Vec<(RemoteRel, RemoteFieldDef)>, SchemaError> {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    let mut parsed: Vec<Option<apollo_compiler::Schema>> = vec![None; remotes.len()];
    for (key, tc) in &config.tables {
        if tc.remote_relationships.is_empty() {
            continue;
        }
        let Some(ci) = find_table(catalog, key, default_schema) else {
            continue;
        };
        let table = &catalog.tables[ci];
        let Some(id) = tables.iter().position(|t| t.catalog_index == ci) else {
            continue;
        };
        for (name, rel) in &tc.remote_relationships {
            let refuse = |why: String| {
                Inconsistency::of_table(ObjectKind::RemoteRelationship, key, name, why)
            };
            if !config
                .remote_schemas
                .iter()
                .any(|r| r.name == rel.remote_schema)
            {
                let why = format!(
                    "remote schema with name \"{}\" not found",
                    rel.remote_schema
                );
                bad.push(refuse(why));
                continue;
            }
            let mut lhs = Vec::new();
            for column in &rel.lhs_fields {
                match table.columns.iter().position(|c| &c.name == column) {
                    Some(i) => lhs.push((column.clone(), i)),
                    None => bad.push(refuse(format!(
                        "column \"{column}\" of the table is not found (lhs_fields name columns)"
                    ))),
                }
            }
            if lhs.len() != rel.lhs_fields.len() {
                continue;
            }
            if let Some(v) =
                (rel.argument_columns().into_iter()).find(|c| !rel.lhs_fields.contains(c))
            {
                bad.push(refuse(format!(
                    "variable \"{v}\" is not found (an argument reads it, lhs_fields does not list it)"
                )));
                continue;
            }
            let info = &tables[id];
            if info.fields.contains_key(name) {
                bad.push(refuse(format!(
                    "field with name \"{name}\" already exists in table \"{key}\""
                )));
                continue;
            }
            // Served to the role only where it reads the row and every column
            // the arguments take.
            let columns_read = lhs.iter().all(|(_, c)| {
                let field = &info.column_fields[*c];
                info.fields.get(field) == Some(&TableField::Column(*c))
            });
            let Some(r) = remotes
                .iter()
                .position(|s| s.config.name == rel.remote_schema)
            else {
                continue;
            };
            let schema = parsed[r].get_or_insert_with(|| remotes[r].introspected.parsed_schema());
            let field = match remote_field(schema, &remotes[r], rel) {
                Ok(field) => field,
                Err(why) if role.is_none() => {
                    bad.push(refuse(why));
                    continue;
                }
                // Not in this role's part of the remote (the admin's schema
                // reports one that is in no part): not served to it.
                Err(_) => continue,
            };
            if !readable[id] || !columns_read {
                continue;
            }
            let (path, def) = field;
            tables[id]
                .fields
                .insert(name.clone(), TableField::Remote(out.len()));
            out.push((
                RemoteRel {
                    name: name.clone(),
                    table: id,
                    remote: r,
                    lhs,
                    path,
                },
                def,
            ));
        }
    }
    if !bad.is_empty() {
        return Err(SchemaError::Inconsistent(bad));
    }
    Ok(out)
}

/// A remote relationship's field as written in the table's type.
#[derive(Debug, Clone)]
pub(crate) struct RemoteFieldDef {
    /// Its type: the remote field's, nullable (a row without the values has
    /// none).
    pub(crate) ty: String,
    /// The remote field's arguments the relationship does not fill.
    pub(crate) args: Vec<(String, String)>,
}

/// The steps to `rel`'s remote field in `remote` (as `schema`, its SDL, has
/// it) and the field as the table serves it; or why it cannot be reached.
pub(crate) fn remote_field(
    schema: &apollo_compiler::Schema,
    remote: &ServedRemote,
    rel: &RemoteRelationshipConfig,
) -> Result<(Vec<RemoteStep>, RemoteFieldDef), String> {
    let r = &remote.introspected;
    let mut parent = r.query_type.clone();
    let mut steps = Vec::new();
    let mut def = None;
    for (i, step) in rel.remote_field.iter().enumerate() {
        let fields = match schema.types.get(parent.as_str()) {
            Some(ExtendedType::Object(o)) => &o.fields,
            Some(ExtendedType::Interface(o)) => &o.fields,
            _ => {
                return Err(format!(
                "field with name \"{}\" not found in remote schema (\"{parent}\" has no fields)",
                step.name
            ))
            }
        };
        let Some((served, field)) =
            (fields.iter()).find(|(n, _)| r.remote_field(&parent, n) == step.name)
        else {
            return Err(format!(
                "field with name \"{}\" not found in remote schema",
                step.name
            ));
        };
        if let Some(a) =
            (step.arguments.keys()).find(|a| !field.arguments.iter().any(|d| d.name == a.as_str()))
        {
            return Err(format!(
                "argument with name \"{a}\" not found in remote schema"
            ));
        }
        let presets = r.presets.get(&(parent.clone(), served.to_string()));
        let filled = |name: &str| {
            step.arguments.contains_key(name)
                || presets.is_some_and(|p| p.iter().any(|p| p.arg == name))
        };
        let last = i + 1 == rel.remote_field.len();
        if !last {
            if let Some(a) = (field.arguments.iter())
                .find(|a| a.ty.is_non_null() && a.default_value.is_none() && !filled(&a.name))
            {
                return Err(format!(
                    "required argument with name \"{}\" is missing",
                    a.name
                ));
            }
            if field.ty.is_list() {
                return Err(format!(
                    "the path to the remote field goes through \"{}\", a list: only objects lead on",
                    step.name
                ));
            }
        } else {
            let args = (field.arguments.iter())
                .filter(|a| !filled(&a.name))
                .map(|a| {
                    let ty = match &a.default_value {
                        Some(v) => format!("{} = {v}", a.ty),
                        None => a.ty.to_string(),
                    };
                    (a.name.to_string(), ty)
                })
                .collect();
            let ty = field.ty.clone().nullable().to_string();
            def = Some(RemoteFieldDef { ty, args });
        }
        steps.push(RemoteStep {
            parent: parent.clone(),
            served: served.to_string(),
            name: step.name.clone(),
            arguments: step.arguments.clone(),
        });
        parent = field.ty.inner_named_type().to_string();
    }
    let def = def.ok_or_else(|| "key \"remote_field\" not found".to_owned())?;
    Ok((steps, def))
}

impl Builder<'_> {
    /// The remote relationships' fields of table `id`'s object type.
    pub(super) fn remote_relationship_fields(&self, id: TableId) -> Vec<FieldDef> {
        (self.remote_rels.iter())
            .filter(|(rel, _)| rel.table == id)
            .map(|(rel, def)| FieldDef::new(&rel.name, &def.ty).with_args(def.args.clone()))
            .collect()
    }
}
