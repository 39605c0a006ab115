//! Relationships from a remote schema's object types to another remote
//! schema's field (Hasura's `remote_schemas[].remote_relationships` with
//! `to_remote_schema`): a field of the type (`extend type`), of the called
//! field's type, with its arguments the relationship does not fill, for the
//! roles whose parts of both remotes have the type, its mapped fields and the
//! called field; answered by one call per relationship per request.

use super::remote_relationships::{remote_field, RemoteFieldDef};
use super::*;
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::{RemoteTypeRel, ServedRemote};
use apollo_compiler::schema::ExtendedType;

/// The relationships from the remotes' types to other remotes that `role`
/// sees; or, for admin, those that cannot be served.
pub(crate) fn resolve(
    remotes: &[ServedRemote],
    role: Option<&str>,
) -> Result<Vec<(RemoteTypeRel, RemoteFieldDef)>, SchemaError> {
    let (mut out, mut bad) = (Vec::new(), Vec::new());
    let all: Vec<_> = (remotes.iter())
        .map(|r| r.config.remote_relationships_to_remotes().0)
        .collect();
    if all.iter().all(Vec::is_empty) {
        return Ok(out);
    }
    let parsed: Vec<_> = (remotes.iter())
        .map(|r| r.introspected.parsed_schema())
        .collect();
    for (s, rels) in all.into_iter().enumerate() {
        let (source, schema) = (&remotes[s].introspected, &parsed[s]);
        // The type's other relationships' names: to tables, and those before.
        let mut taken: Vec<(String, String)> = (remotes[s].config.table_relationships().0)
            .into_iter()
            .map(|(ty, r)| (ty, r.name))
            .collect();
        for (ty, name, rel) in rels {
            let id = format!("{}.{ty}.{name}", remotes[s].config.name);
            let mut refuse = |why: String| {
                if role.is_none() {
                    bad.push(Inconsistency::new(ObjectKind::RemoteRelationship, &id, why));
                }
            };
            let served = source.served_type(&ty);
            let Some(ExtendedType::Object(object)) = schema.types.get(served.as_str()) else {
                refuse(format!(
                    "object type \"{ty}\" not found in the remote schema"
                ));
                continue;
            };
            let scalar = |l: &String| {
                (object.fields.iter()).any(|(n, f)| {
                    source.remote_field(&served, n) == l
                        && f.arguments.is_empty()
                        && (schema.types.get(f.ty.inner_named_type())).is_some_and(|t| t.is_leaf())
                })
            };
            if let Some(l) = rel.lhs_fields.iter().find(|l| !scalar(l)) {
                refuse(format!(
                    "field \"{l}\" of \"{ty}\" is not found or not a scalar (lhs_fields name the type's scalar fields)"
                ));
                continue;
            }
            if let Some(v) =
                (rel.argument_columns().into_iter()).find(|c| !rel.lhs_fields.contains(c))
            {
                refuse(format!(
                    "variable \"{v}\" is not found (an argument reads it, lhs_fields does not list it)"
                ));
                continue;
            }
            let pair = (ty.clone(), name.clone());
            if object.fields.contains_key(name.as_str()) || taken.contains(&pair) {
                refuse(format!(
                    "field with name \"{name}\" already exists in type \"{ty}\""
                ));
                continue;
            }
            taken.push(pair);
            // A role that does not see the called remote is not served it.
            let Some(t) = (remotes.iter()).position(|r| r.config.name == rel.remote_schema) else {
                refuse(format!(
                    "remote schema with name \"{}\" not found",
                    rel.remote_schema
                ));
                continue;
            };
            match remote_field(&parsed[t], &remotes[t], &rel) {
                Ok((path, def)) => out.push((
                    RemoteTypeRel {
                        object: served.clone(),
                        field: name,
                        remote: t,
                        lhs: rel.lhs_fields.clone(),
                        path,
                    },
                    def,
                )),
                Err(why) => refuse(why),
            }
        }
    }
    match bad.is_empty() {
        true => Ok(out),
        false => Err(SchemaError::Inconsistent(bad)),
    }
}

impl Builder<'_> {
    /// The relationship fields of the remotes' types to other remotes, each
    /// type's as one `extend type`.
    pub(super) fn write_remote_to_remote(&mut self) {
        let mut objects: Vec<&str> = Vec::new();
        for (rel, _) in self.remote_to_remote {
            if !objects.contains(&rel.object.as_str()) {
                objects.push(&rel.object);
            }
        }
        for object in objects {
            let fields: Vec<FieldDef> = (self.remote_to_remote.iter())
                .filter(|(rel, _)| rel.object == object)
                .map(|(rel, def)| FieldDef::new(&rel.field, &def.ty).with_args(def.args.clone()))
                .collect();
            self.sdl.object("extend type", object, None, &fields);
        }
    }
}
