//! Imported metadata merged into the config file's settings.

use crate::config::Config;

/// Adds `other`'s tables to `config` (the config file wins where both say something).
pub fn merge(config: &mut Config, other: Config) {
    if config.api_limits == Default::default() {
        config.api_limits = other.api_limits;
    }
    if config.root_fields == Default::default() {
        config.root_fields = other.root_fields.clone();
    }
    if config.naming.is_none() {
        config.naming = other.naming;
    }
    if config.auto_track.is_none() {
        config.auto_track = other.auto_track;
    }
    config.allow_list.extend(other.allow_list);
    for cron in other.cron_triggers {
        if !config.cron_triggers.iter().any(|c| c.name == cron.name) {
            config.cron_triggers.push(cron);
        }
    }
    for action in other.actions {
        if !config.actions.iter().any(|a| a.name == action.name) {
            config.actions.push(action);
        }
    }
    // Custom types by name, the config file's winning.
    let ours = &mut config.custom_types;
    let theirs = other.custom_types;
    for o in theirs.objects {
        if !ours.objects.iter().any(|x| x.name == o.name) {
            ours.objects.push(o);
        }
    }
    for i in theirs.input_objects {
        if !ours.input_objects.iter().any(|x| x.name == i.name) {
            ours.input_objects.push(i);
        }
    }
    for e in theirs.enums {
        if !ours.enums.iter().any(|x| x.name == e.name) {
            ours.enums.push(e);
        }
    }
    for sc in theirs.scalars {
        if !ours.scalars.iter().any(|x| x.name == sc.name) {
            ours.scalars.push(sc);
        }
    }
    config.left_out.extend(other.left_out);
    let introspection = &mut config.graphql_schema_introspection.disabled_for_roles;
    introspection.extend(other.graphql_schema_introspection.disabled_for_roles);
    for (name, f) in other.functions {
        config.functions.entry(name).or_insert(f);
    }
    for (role, parents) in other.inherited_roles {
        config.inherited_roles.entry(role).or_insert(parents);
    }
    for (key, t) in other.tables {
        let target = config.tables.entry(key).or_default();
        if target.custom_name.is_none() {
            target.custom_name = t.custom_name;
        }
        if target.comment.is_none() {
            target.comment = t.comment;
        }
        target.is_enum |= t.is_enum;
        for (kind, root) in t.custom_root_fields {
            target.custom_root_fields.entry(kind).or_insert(root);
        }
        for (column, c) in t.columns {
            let target = target.columns.entry(column).or_default();
            if target.custom_name.is_none() {
                target.custom_name = c.custom_name;
            }
            if target.comment.is_none() {
                target.comment = c.comment;
            }
        }
        for (name, r) in t.relationships {
            target.relationships.entry(name).or_insert(r);
        }
        for (name, c) in t.computed_fields {
            target.computed_fields.entry(name).or_insert(c);
        }
        for (name, e) in t.event_triggers {
            target.event_triggers.entry(name).or_insert(e);
        }
        for (name, r) in t.foreign_key_relationships {
            target.foreign_key_relationships.entry(name).or_insert(r);
        }
        for (role, p) in t.permissions {
            target.permissions.entry(role).or_insert(p);
        }
    }
}
