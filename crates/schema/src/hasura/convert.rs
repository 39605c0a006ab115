//! Hasura's table entries become Grafton's config: names, relationships and the four
//! permission kinds; what is parsed but not served yet is said loudly.

use super::{Entry, ForeignKeyOn, Relationship};
use crate::config::{
    Config, DeletePermission, ForeignKeyRelationship, InsertPermission, ManualKind,
    ManualRelationship, SelectPermission, TableConfig, UpdatePermission,
};
use crate::inconsistent::{Inconsistency, ObjectKind};
use std::collections::BTreeMap;

pub(super) fn convert(entries: Vec<Entry>) -> Result<Config, String> {
    let mut config = Config::default();
    for mut e in entries {
        let key = e.table.key();
        config.left_out.extend(unserved(&key, &e));
        // A permission that validates its input through a webhook cannot be served
        // as written: it is left out whole, and reported.
        for (kind, list) in [
            (ObjectKind::SelectPermission, &mut e.select_permissions),
            (ObjectKind::InsertPermission, &mut e.insert_permissions),
            (ObjectKind::UpdatePermission, &mut e.update_permissions),
            (ObjectKind::DeletePermission, &mut e.delete_permissions),
        ] {
            list.retain(|p| {
                let validated = p.permission.validate_input.is_some();
                if validated {
                    let why = "its validate_input (an input validation webhook) is not served by Grafton yet";
                    config.left_out.push(Inconsistency::of_table(kind, &key, &p.role, why.to_owned()));
                }
                !validated
            });
        }
        let triggers = event_triggers(&key, &e.event_triggers, &mut config.left_out);
        let remote_relationships =
            remote_relationships(&key, &e.remote_relationships, &mut config.left_out);
        let table = config.tables.entry(key).or_default();
        table.event_triggers = triggers;
        table.remote_relationships = remote_relationships;
        for c in e.computed_fields {
            table.computed_fields.insert(
                c.name,
                crate::config::ComputedFieldConfig {
                    function: c.definition.function.key(),
                    table_argument: c.definition.table_argument,
                    session_argument: c.definition.session_argument,
                    comment: c.comment,
                },
            );
        }
        table.custom_name = e.configuration.custom_name;
        table.comment = e.configuration.comment;
        table.is_enum = e.is_enum;
        table.custom_root_fields = e.configuration.custom_root_fields;
        for (column, name) in e.configuration.custom_column_names {
            table.columns.entry(column).or_default().custom_name = Some(name);
        }
        // `column_config` wins over the older spelling, as in Hasura.
        for (column, c) in e.configuration.column_config {
            let target = table.columns.entry(column).or_default();
            if c.custom_name.is_some() {
                target.custom_name = c.custom_name;
            }
            target.comment = c.comment;
        }
        for (kind, list) in [
            (ManualKind::Object, e.object_relationships),
            (ManualKind::Array, e.array_relationships),
        ] {
            for r in list {
                let name = r.name.clone();
                relationship(table, kind, r)
                    .map_err(|why| format!("{}: relationship '{name}': {why}", e.table.key()))?;
            }
        }
        for p in e.select_permissions {
            let b = p.permission;
            table.permissions.entry(p.role).or_default().select = Some(SelectPermission {
                columns: b.columns.unwrap_or_default(),
                filter: b.filter,
                limit: b.limit,
                allow_aggregations: b.allow_aggregations,
                query_root_fields: b.query_root_fields,
                subscription_root_fields: b.subscription_root_fields,
                computed_fields: b.computed_fields,
                redact: BTreeMap::new(),
            });
        }
        for p in e.insert_permissions {
            let b = p.permission;
            table.permissions.entry(p.role).or_default().insert = Some(InsertPermission {
                columns: b.columns.unwrap_or_default(),
                check: b.check,
                set: b.set,
                backend_only: b.backend_only,
            });
        }
        for p in e.update_permissions {
            let b = p.permission;
            table.permissions.entry(p.role).or_default().update = Some(UpdatePermission {
                columns: b.columns.unwrap_or_default(),
                filter: b.filter,
                check: b.check,
                set: b.set,
                backend_only: b.backend_only,
            });
        }
        for p in e.delete_permissions {
            table.permissions.entry(p.role).or_default().delete = Some(DeletePermission {
                filter: p.permission.filter,
                backend_only: p.permission.backend_only,
            });
        }
    }
    Ok(config)
}

/// What a table's entry asks for that Grafton does not serve yet, each object by
/// name, so a project's side effects never stop in silence.
fn unserved(key: &str, e: &Entry) -> Vec<Inconsistency> {
    let mut out = Vec::new();
    if e.apollo_federation_config.is_some() {
        let why = "Apollo Federation is not served by Grafton yet".to_owned();
        out.push(Inconsistency::of_table(
            ObjectKind::ApolloFederationConfig,
            key,
            key,
            why,
        ));
    }
    out
}

/// A table's remote relationships by name; one that cannot be read is left
/// out, reported.
fn remote_relationships(
    key: &str,
    list: &[serde_json::Value],
    left_out: &mut Vec<Inconsistency>,
) -> BTreeMap<String, crate::config::RemoteRelationshipConfig> {
    let mut out = BTreeMap::new();
    for r in list {
        let name = json_name(r);
        let definition = r.get("definition").cloned().unwrap_or_default();
        match crate::config::RemoteRelationshipConfig::try_from(definition) {
            Ok(rel) => {
                out.insert(name, rel);
            }
            Err(why) => left_out.push(Inconsistency::of_table(
                ObjectKind::RemoteRelationship,
                key,
                &name,
                why,
            )),
        }
    }
    out
}

/// The `name` of a metadata object (`?` when it has none).
pub(super) fn json_name(v: &serde_json::Value) -> String {
    v.get("name")
        .and_then(|n| n.as_str())
        .unwrap_or("?")
        .to_owned()
}

fn relationship(table: &mut TableConfig, kind: ManualKind, r: Relationship) -> Result<(), String> {
    if let Some(m) = r.using.manual_configuration {
        table.relationships.insert(
            r.name,
            ManualRelationship {
                kind,
                table: m.remote_table.key(),
                columns: m.column_mapping,
                insertion_order: m.insertion_order.unwrap_or_default(),
            },
        );
        return Ok(());
    }
    let (remote, columns) = match r.using.foreign_key_constraint_on {
        Some(ForeignKeyOn::Column(c)) => (None, vec![c]),
        Some(ForeignKeyOn::Columns(cs)) => (None, cs),
        Some(ForeignKeyOn::Remote {
            table,
            column,
            columns,
        }) => (
            Some(table.key()),
            columns
                .unwrap_or_default()
                .into_iter()
                .chain(column)
                .collect(),
        ),
        None => {
            return Err(
                "`using` names neither foreign_key_constraint_on nor manual_configuration".into(),
            )
        }
    };
    table.foreign_key_relationships.insert(
        r.name,
        ForeignKeyRelationship {
            kind,
            table: remote,
            columns,
        },
    );
    Ok(())
}

/// A table's event triggers; one that does not read as Hasura's, or asks for what
/// is not served yet (request and response transforms), is left out and reported.
fn event_triggers(
    key: &str,
    listed: &[serde_json::Value],
    left_out: &mut Vec<Inconsistency>,
) -> BTreeMap<String, crate::config::EventTriggerConfig> {
    let mut out = BTreeMap::new();
    for t in listed {
        let name = json_name(t);
        let refuse =
            |why: String| Inconsistency::of_table(ObjectKind::EventTrigger, key, &name, why);
        let t = match serde_json::from_value::<crate::config::EventTriggerConfig>(t.clone()) {
            Ok(t) => t,
            Err(e) => {
                left_out.push(refuse(format!("it does not read as an event trigger: {e}")));
                continue;
            }
        };
        let unread = (t.request_transform.as_ref())
            .and_then(|r| grafton_kriti::RequestTransform::read(r).err());
        let why = if t.response_transform.is_some() {
            Some("a response transform is not served for event triggers".to_owned())
        } else if let Some(why) = unread {
            Some(format!("its request_transform: {why}"))
        } else if t.webhook.is_none() == t.webhook_from_env.is_none() {
            Some("it needs one of webhook and webhook_from_env".to_owned())
        } else {
            None
        };
        match why {
            Some(why) => left_out.push(refuse(why)),
            None => {
                out.insert(t.name.clone(), t);
            }
        }
    }
    out
}
