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
    // Named lists merged by name, the config file's entry winning.
    add_new(&mut config.cron_triggers, other.cron_triggers, |c| &c.name);
    add_new(&mut config.actions, other.actions, |a| &a.name);
    add_new(&mut config.remote_schemas, other.remote_schemas, |r| {
        &r.name
    });
    let (ours, theirs) = (&mut config.custom_types, other.custom_types);
    add_new(&mut ours.objects, theirs.objects, |o| &o.name);
    add_new(&mut ours.input_objects, theirs.input_objects, |i| &i.name);
    add_new(&mut ours.enums, theirs.enums, |e| &e.name);
    add_new(&mut ours.scalars, theirs.scalars, |s| &s.name);
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
        for (name, r) in t.remote_relationships {
            target.remote_relationships.entry(name).or_insert(r);
        }
        for (name, r) in t.foreign_key_relationships {
            target.foreign_key_relationships.entry(name).or_insert(r);
        }
        for (role, p) in t.permissions {
            target.permissions.entry(role).or_insert(p);
        }
    }
}

/// Appends each of `theirs` whose name none of `ours` has.
fn add_new<T>(ours: &mut Vec<T>, theirs: Vec<T>, name: impl Fn(&T) -> &String) {
    for t in theirs {
        if !ours.iter().any(|o| name(o) == name(&t)) {
            ours.push(t);
        }
    }
}
