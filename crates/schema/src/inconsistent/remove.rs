//! Taking an inconsistent object out of the config, with what that implies (an
//! inherited role whose own permission goes loses every permission).

use super::{is_permission, Inconsistency, ObjectKind};
use crate::config::Config;

/// Takes `object` out of `config`. Returns whether anything was removed.
pub fn remove(config: &mut Config, object: &Inconsistency) -> bool {
    use ObjectKind::*;
    let name = object.name.as_str();
    if object.kind == InheritedRole {
        return drop_role(config, name);
    }
    if object.kind == Table {
        return config.tables.remove(name).is_some();
    }
    if object.kind == Function {
        return config.functions.remove(name).is_some();
    }
    if object.kind == CronTrigger {
        let before = config.cron_triggers.len();
        config.cron_triggers.retain(|c| c.name != name);
        return before != config.cron_triggers.len();
    }
    if object.kind == Action {
        let before = config.actions.len();
        config.actions.retain(|a| a.name != name);
        return before != config.actions.len();
    }
    if object.kind == RemoteSchema {
        let before = config.remote_schemas.len();
        config.remote_schemas.retain(|r| r.name != name);
        return before != config.remote_schemas.len();
    }
    if object.kind == RemoteRelationship && object.table.is_none() {
        // `remote.Type.relationship`: that relationship of the remote's type.
        let mut parts = name.splitn(3, '.');
        let (Some(remote), Some(ty), Some(rel)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let Some(r) = config.remote_schemas.iter_mut().find(|r| r.name == remote) else {
            return false;
        };
        let mut removed = false;
        for group in r.remote_relationships.iter_mut() {
            if group.get("type_name").and_then(|t| t.as_str()) != Some(ty) {
                continue;
            }
            if let Some(list) = group
                .get_mut("relationships")
                .and_then(|l| l.as_array_mut())
            {
                let before = list.len();
                list.retain(|x| x.get("name").and_then(|n| n.as_str()) != Some(rel));
                removed |= list.len() != before;
            }
        }
        return removed;
    }
    if object.kind == CustomTypes {
        // `Type.relationship`: that relationship alone.
        if let Some((ty, rel)) = name.split_once('.') {
            let objects = config.custom_types.objects.iter_mut();
            let Some(o) = objects.into_iter().find(|o| o.name == ty) else {
                return false;
            };
            let before = o.relationships.len();
            o.relationships.retain(|r| r.name != rel);
            return before != o.relationships.len();
        }
        let had = !config.custom_types.is_empty();
        config.custom_types = Default::default();
        return had;
    }
    let Some(table) = object.table.as_deref() else {
        return false;
    };
    // An inherited role's own permission hides its parents' wider ones: the
    // whole role goes, never just that permission.
    if is_permission(object.kind) && config.inherited_roles.contains_key(name) {
        return drop_role(config, name);
    }
    let Some(tc) = config.tables.get_mut(table) else {
        return false;
    };
    match object.kind {
        ObjectRelation | ArrayRelation => {
            let manual = tc.relationships.remove(name).is_some();
            let keyed = tc.foreign_key_relationships.remove(name).is_some();
            let before = tc.rename_relationships.len();
            tc.rename_relationships.retain(|_, to| to != name);
            manual || keyed || before != tc.rename_relationships.len()
        }
        ComputedField => tc.computed_fields.remove(name).is_some(),
        RemoteRelationship => tc.remote_relationships.remove(name).is_some(),
        SelectPermission | InsertPermission | UpdatePermission | DeletePermission => {
            let Some(p) = tc.permissions.get_mut(name) else {
                return false;
            };
            let removed = match object.kind {
                SelectPermission => p.select.take().is_some(),
                InsertPermission => p.insert.take().is_some(),
                UpdatePermission => p.update.take().is_some(),
                _ => p.delete.take().is_some(),
            };
            if p.select.is_none() && p.insert.is_none() && p.update.is_none() && p.delete.is_none()
            {
                tc.permissions.remove(name);
            }
            removed
        }
        _ => false,
    }
}

/// Removes an inherited role and every permission written for it.
fn drop_role(config: &mut Config, role: &str) -> bool {
    let mut removed = config.inherited_roles.remove(role).is_some();
    for tc in config.tables.values_mut() {
        removed |= tc.permissions.remove(role).is_some();
    }
    removed
}
