//! Relationships from an action's output type to tables (Hasura's, on
//! `custom_types.objects[].relationships`): each read against the tracked
//! tables (the table, the object's fields and the table's columns it maps),
//! then written as a field of the object for the roles that may read the table:
//! the table's object type, or a list of it with the list arguments.

use super::*;
use crate::config::ActionRelationship;
use crate::inconsistent::{Inconsistency, ObjectKind};
use crate::model::ActionRel;

/// Every relationship of the custom types, read against `tables`; or what of
/// them cannot be served (`Type.relationship`, reported and left out).
pub(crate) fn resolve(
    catalog: &Catalog,
    config: &Config,
    tables: &[TableInfo],
    default_schema: &str,
) -> Result<Vec<ActionRel>, SchemaError> {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for o in &config.custom_types.objects {
        for (i, r) in o.relationships.iter().enumerate() {
            let twice = o.relationships[..i].iter().any(|x| x.name == r.name);
            let read = match twice {
                true => Err(format!(
                    "relationship \"{}\" of \"{}\" is defined twice",
                    r.name, o.name
                )),
                false => one(catalog, config, o, r, tables, default_schema),
            };
            match read {
                Ok(rel) => out.push(rel),
                Err(why) => {
                    let name = format!("{}.{}", o.name, r.name);
                    bad.push(Inconsistency::new(ObjectKind::CustomTypes, &name, why));
                }
            }
        }
    }
    match bad.is_empty() {
        true => Ok(out),
        false => Err(SchemaError::Inconsistent(bad)),
    }
}

pub(super) fn one(
    catalog: &Catalog,
    config: &Config,
    o: &crate::config::CustomObject,
    r: &ActionRelationship,
    tables: &[TableInfo],
    default_schema: &str,
) -> Result<ActionRel, String> {
    let (o_name, r_name) = (&o.name, &r.name);
    if r.source.as_deref().is_some_and(|s| s != "default") {
        return Err(format!(
            "relationship \"{r_name}\" of object type \"{o_name}\" names another source; Grafton serves one"
        ));
    }
    let key = match &r.remote_table {
        serde_json::Value::String(name) => name.clone(),
        t => {
            let name = t.get("name").and_then(|n| n.as_str()).unwrap_or_default();
            // As a table's key in Hasura's metadata: `public` is the default schema.
            match t.get("schema").and_then(|s| s.as_str()) {
                Some(schema) if schema != default_schema && schema != "public" => {
                    format!("{schema}.{name}")
                }
                _ => name.to_owned(),
            }
        }
    };
    let ci = find_table(catalog, &key, default_schema);
    let table = ci.and_then(|ci| tables.iter().position(|t| t.catalog_index == ci));
    let (Some(ci), Some(table)) = (ci, table) else {
        return Err(format!(
            "the remote table \"{key}\" for relationship \"{r_name}\" of object type \"{o_name}\" does not exist"
        ));
    };
    let single = match r.kind.as_str() {
        "object" => true,
        "array" => false,
        other => {
            return Err(format!(
                "relationship \"{r_name}\": type '{other}', expected object or array"
            ))
        }
    };
    if r.field_mapping.is_empty() {
        // It would join every row the role reads to every object.
        return Err(format!(
            "relationship \"{r_name}\" of \"{o_name}\" maps no field"
        ));
    }
    let mut mapping = Vec::new();
    for (field, column) in &r.field_mapping {
        let Some(f) = o.fields.iter().find(|f| &f.name == field) else {
            return Err(format!(
                "the field \"{field}\" for relationship \"{r_name}\" in object type \"{o_name}\" does not exist"
            ));
        };
        if f.ty.contains('[') {
            return Err(format!(
                "the field \"{field}\" for relationship \"{r_name}\" in object type \"{o_name}\" is a list"
            ));
        }
        let named = super::action_types::named_type(&f.ty);
        let kind = super::action_types::kind_of(&config.custom_types, named);
        if kind == Some(super::action_types::Kind::Object) {
            return Err(format!(
                "Relationships cannot be defined with nested object fields: \"{r_name}\""
            ));
        }
        let columns = &catalog.tables[ci].columns;
        let Some(c) = columns.iter().position(|c| &c.name == column) else {
            return Err(format!(
                "the column \"{column}\" of remote table \"{key}\" for relationship \"{r_name}\" of object type \"{o_name}\" does not exist"
            ));
        };
        mapping.push((field.clone(), c));
    }
    if o.fields.iter().any(|f| &f.name == r_name) {
        return Err(format!(
            "relationship \"{r_name}\" has the name of a field of \"{o_name}\""
        ));
    }
    Ok(ActionRel {
        object: o.name.clone(),
        field: r.name.clone(),
        table,
        single,
        mapping,
    })
}

impl Builder<'_> {
    /// The relationship fields of the custom object `object` the role may
    /// follow (it reads the table), recorded for the model.
    pub(super) fn action_relationship_fields(&mut self, object: &str) -> Vec<FieldDef> {
        self.relationship_fields(self.action_rels, object)
    }

    /// The fields of `object`'s relationships among `rels` the role may
    /// follow, recorded for the model.
    pub(super) fn relationship_fields(
        &mut self,
        rels: &[ActionRel],
        object: &str,
    ) -> Vec<FieldDef> {
        let mut fields = Vec::new();
        for rel in rels.iter().filter(|r| r.object == object) {
            let t = rel.table;
            if self.access[t].select.is_none() || !self.readable[t] {
                continue;
            }
            let ty = self.tables[t].type_name.clone();
            fields.push(match rel.single {
                true => FieldDef::new(&rel.field, ty),
                false => {
                    FieldDef::new(&rel.field, format!("[{ty}!]!")).with_args(self.list_args(t))
                }
            });
            self.written_rels.push(rel.clone());
        }
        fields
    }
}
