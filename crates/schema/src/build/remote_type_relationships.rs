//! Relationships from a remote schema's object types to tables (Hasura's
//! `remote_schemas[].remote_relationships` with `to_source`): read as a custom
//! object's relationship is (the remote type's fields standing for the
//! object's), then served the same way: a field of the type (`extend type`)
//! for the roles that read the table, filled by one statement per
//! relationship field of a request.

use super::*;
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::{ActionRel, ServedRemote};
use apollo_compiler::schema::ExtendedType;

/// The relationships from the remotes' types that `role` sees (its part of
/// each remote has the type and the fields they map); or, for admin, those
/// that cannot be served.
pub(crate) fn resolve(
    catalog: &Catalog,
    config: &Config,
    tables: &[TableInfo],
    remotes: &[ServedRemote],
    role: Option<&str>,
    default_schema: &str,
) -> Result<Vec<ActionRel>, SchemaError> {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for remote in remotes {
        let (rels, _) = remote.config.table_relationships();
        if rels.is_empty() {
            continue;
        }
        let r = &remote.introspected;
        let schema = r.parsed_schema();
        for (ty, rel) in rels {
            let served = r.served_type(&ty);
            let name = format!("{}.{ty}.{}", remote.config.name, rel.name);
            let fields = match schema.types.get(served.as_str()) {
                Some(ExtendedType::Object(o)) => &o.fields,
                _ => {
                    let why = format!("object type \"{ty}\" not found in the remote schema");
                    if role.is_none() {
                        bad.push(Inconsistency::new(
                            ObjectKind::RemoteRelationship,
                            &name,
                            why,
                        ));
                    }
                    continue;
                }
            };
            // The type's fields, in the remote's names, as a custom object's.
            let object = crate::config::CustomObject {
                name: served.clone(),
                description: None,
                fields: (fields.iter())
                    .filter(|(_, f)| f.arguments.is_empty())
                    .map(|(n, f)| crate::config::CustomField {
                        name: r.remote_field(&served, n).to_owned(),
                        ty: f.ty.to_string(),
                        description: None,
                        arguments: None,
                    })
                    .collect(),
                relationships: Vec::new(),
            };
            let object_field = |field: &str| {
                (object.fields.iter())
                    .find(|f| f.name == field)
                    .map(|f| f.ty.trim_end_matches('!').to_owned())
            };
            let nested = (rel.field_mapping.keys()).find(|f| {
                object_field(f).is_some_and(
                    |t| matches!(schema.types.get(t.as_str()), Some(t) if !t.is_leaf()),
                )
            });
            let read = match nested {
                Some(f) => Err(format!(
                    "the field \"{f}\" of \"{ty}\" is not a scalar: only scalars map to columns"
                )),
                None => super::action_relationships::one(
                    catalog,
                    config,
                    &object,
                    &rel,
                    tables,
                    default_schema,
                ),
            };
            match read {
                Ok(rel) => out.push(rel),
                // A role's part without a mapped field: not served to it.
                Err(_) if role.is_some() => {}
                Err(why) => bad.push(Inconsistency::new(
                    ObjectKind::RemoteRelationship,
                    &name,
                    why,
                )),
            }
        }
    }
    match bad.is_empty() {
        true => Ok(out),
        false => Err(SchemaError::Inconsistent(bad)),
    }
}

impl Builder<'_> {
    /// The relationship fields of the remotes' types, each type's as one
    /// `extend type` (after the types are written).
    pub(super) fn write_remote_type_relationships(&mut self) {
        let mut objects: Vec<String> = Vec::new();
        for rel in self.remote_type_rels {
            if !objects.contains(&rel.object) {
                objects.push(rel.object.clone());
            }
        }
        for object in objects {
            let fields = self.relationship_fields(self.remote_type_rels, &object);
            if !fields.is_empty() {
                self.sdl.object("extend type", &object, None, &fields);
            }
        }
    }
}
